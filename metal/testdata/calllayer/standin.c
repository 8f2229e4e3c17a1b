// standin.c: the Objective-C runtime as darwinkit's objc.Call uses it (object_getClass,
// class_getMethodImplementation, sel_registerName, NSString), and two wrappers around
// libffi (linked with -Wl,--wrap=ffi_prep_cif,--wrap=ffi_call) that watch what libffi is
// given. The rest of the runtime functions objc declares are generated (stubs.c) and
// abort if reached.
#include <ffi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "_cgo_export.h"
#include "standin.h"

struct standin_record standin_rec;
const char *standin_expect_sel;
int standin_expect_imp = -1;
volatile int standin_window_on;
int standin_move_on;
int standin_window_req;
int standin_window_done;

// Classes and objects: isa first, as in the runtime. The class of every object answers the
// message being replayed; other classes (objc.GetClass at package init) answer nothing.
struct standin_class { const char *name; int replays; };
struct standin_obj { struct standin_class *isa; long id; };
static struct standin_class replay_class = {"StandinReplay", 1};
static struct standin_class other_class = {"StandinOther", 0};
#define NOBJECTS 4096
static struct standin_obj objects[NOBJECTS];

void *standin_object(int i) {
	struct standin_obj *o = &objects[(unsigned)i % NOBJECTS];
	o->isa = &replay_class;
	o->id = i;
	return o;
}

void standin_reset(void) {
	memset(&standin_rec, 0, sizeof standin_rec);
	standin_rec.imp = -1;
}

static void unexpected(const char *what) {
	fprintf(stderr, "standin: %s was reached\n", what);
	standin_rec.unexpected++;
}

void *Object_GetClass(void *ptr) { return ((struct standin_obj *)ptr)->isa; }

void *Objc_GetClass(const char *name) { (void)name; return &other_class; }

void *Class_GetMethodImplementation(void *cls, void *sel) {
	struct standin_class *c = cls;
	if (!c->replays || standin_expect_imp < 0 || standin_expect_imp >= standin_nimps ||
	    strcmp((const char *)sel, standin_expect_sel) != 0) {
		unexpected("class_getMethodImplementation for another selector or class");
		return NULL;
	}
	return standin_imps[standin_expect_imp];
}

void *Class_GetMethodImplementationStret(void *cls, void *sel) {
	unexpected("class_getMethodImplementation_stret");
	return Class_GetMethodImplementation(cls, sel);
}

// Selectors are interned C strings (the runtime's SELs are unique names too).
#define NSELS 1024
static char *sels[NSELS];
static int nsels;

void *Selector_SEL_RegisterName(const char *name) {
	for (int i = 0; i < nsels; i++)
		if (strcmp(sels[i], name) == 0)
			return sels[i];
	if (nsels == NSELS)
		abort();
	sels[nsels] = strdup(name);
	return sels[nsels++];
}

const char *Selector_SEL_GetName(void *ptr) { return ptr; }

// An NSString is a C string here (never freed: the replays make a few thousand).
void *to_ns_string(const char *str) { return strdup(str); }
const char *to_c_string(void *ptr) { return ptr; }

void standin_enter(int imp, void *self, void *cmd, int nargs) {
	standin_rec.imp = imp;
	standin_rec.calls++;
	standin_rec.self = self;
	standin_rec.cmd = cmd;
	standin_rec.nargs = nargs;
}

void standin_arg(int i, const void *p, size_t n) {
	if (i >= STANDIN_MAXARGS || n > STANDIN_ARGBYTES)
		abort();
	memcpy(standin_rec.arg[i], p, n);
	standin_rec.argsize[i] = (int)n;
}

// --- libffi, watched ---------------------------------------------------------------

ffi_status __real_ffi_prep_cif(ffi_cif *, ffi_abi, unsigned int, ffi_type *, ffi_type **);
void __real_ffi_call(ffi_cif *, void (*)(void), void *, void **);

#define SNAPMAX 16

// What ffi_prep_cif was given, as it was once prepared: the types ffi_call will read again.
static struct {
	ffi_cif *cif;
	unsigned nargs;
	ffi_type *rtype, rcopy;
	ffi_type **atypes;
	ffi_type *at[SNAPMAX], acopy[SNAPMAX];
	ffi_type *el[SNAPMAX][SNAPMAX], elcopy[SNAPMAX][SNAPMAX];
	int nel[SNAPMAX];
} snap;

ffi_status __wrap_ffi_prep_cif(ffi_cif *cif, ffi_abi abi, unsigned int nargs, ffi_type *rtype, ffi_type **atypes) {
	ffi_status s = __real_ffi_prep_cif(cif, abi, nargs, rtype, atypes);
	standin_rec.prepped++;
	if (nargs > SNAPMAX)
		abort();
	snap.cif = cif;
	snap.nargs = nargs;
	snap.rtype = rtype;
	snap.rcopy = *rtype;
	snap.atypes = atypes;
	for (unsigned i = 0; i < nargs; i++) {
		snap.at[i] = atypes[i];
		snap.acopy[i] = *atypes[i];
		snap.nel[i] = 0;
		if (atypes[i]->type == FFI_TYPE_STRUCT)
			for (int j = 0; atypes[i]->elements[j] != NULL; j++) {
				if (j + 1 >= SNAPMAX)
					abort();
				snap.el[i][j] = atypes[i]->elements[j];
				snap.elcopy[i][j] = *atypes[i]->elements[j];
				snap.nel[i] = j + 1;
			}
	}
	return s;
}

static int sametype(const ffi_type *a, const ffi_type *b) {
	return a->size == b->size && a->alignment == b->alignment && a->type == b->type && a->elements == b->elements;
}

// typeschanged says what libffi would now read differently from what it was prepared with.
static int typeschanged(ffi_cif *cif) {
	char *w = standin_rec.typeswhat;
	size_t n = sizeof standin_rec.typeswhat;
	if (cif != snap.cif)
		return snprintf(w, n, "ffi_call on a cif other than the one just prepared"), 1;
	if (cif->nargs != snap.nargs || cif->arg_types != snap.atypes || cif->rtype != snap.rtype)
		return snprintf(w, n, "the cif itself changed"), 1;
	if (!sametype(cif->rtype, &snap.rcopy))
		return snprintf(w, n, "result type: type %u size %zu, prepared as type %u size %zu", cif->rtype->type,
		                cif->rtype->size, snap.rcopy.type, snap.rcopy.size), 1;
	for (unsigned i = 0; i < cif->nargs; i++) {
		ffi_type *t = cif->arg_types[i];
		if (t != snap.at[i])
			return snprintf(w, n, "arg_types[%u] is %p, prepared as %p", i, (void *)t, (void *)snap.at[i]), 1;
		if (!sametype(t, &snap.acopy[i]))
			return snprintf(w, n, "arg_types[%u]: type %#x size %#zx, prepared as type %u size %zu", i, t->type,
			                t->size, snap.acopy[i].type, snap.acopy[i].size), 1;
		for (int j = 0; j < snap.nel[i]; j++)
			if (t->elements[j] != snap.el[i][j] || !sametype(t->elements[j], &snap.elcopy[i][j]))
				return snprintf(w, n, "arg_types[%u]->elements[%d] changed", i, j), 1;
	}
	return 0;
}

static int narrowint(const ffi_type *t) {
	switch (t->type) {
	case FFI_TYPE_UINT8: case FFI_TYPE_SINT8: case FFI_TYPE_UINT16: case FFI_TYPE_SINT16:
	case FFI_TYPE_UINT32: case FFI_TYPE_SINT32: case FFI_TYPE_INT:
		return t->size < sizeof(ffi_arg);
	}
	return 0;
}

// window hands over to the Go helper goroutine while this call is in C and waits for it.
static void window(void) {
	if (!standin_window_on)
		return;
	int seq = __atomic_add_fetch(&standin_window_req, 1, __ATOMIC_SEQ_CST);
	struct timespec ts = {0, 20000};
	for (long waited = 0; __atomic_load_n(&standin_window_done, __ATOMIC_SEQ_CST) != seq; waited += ts.tv_nsec) {
		if (waited > 10000000000L) {
			standin_rec.timeouts++;
			return;
		}
		nanosleep(&ts, NULL);
	}
	standin_rec.windows++;
}

// readable says whether n bytes at p can be read (a pipe's write fails with EFAULT if not).
static int readable(const void *p, size_t n) {
	static int fds[2] = {-1, -1};
	char buf[256];
	if (n > sizeof buf)
		abort();
	if (fds[0] < 0 && pipe(fds) != 0)
		abort();
	if (write(fds[1], p, n) != (ssize_t)n)
		return 0;
	if (read(fds[0], buf, n) != (ssize_t)n)
		abort();
	return 1;
}

// onoldstack says whether [p, p+n) lies on the stack the goroutine left: within 1 MiB above
// the frame that moved it (at before), with its copy at p+delta on the new stack, word for
// word, but for pointers into the stack, which the move adjusted by delta.
static int onoldstack(uintptr_t p, size_t n, uintptr_t before, intptr_t delta) {
	if (delta == 0 || n == 0 || p < before || p + n > before + (1 << 20))
		return 0;
	if (!readable((void *)p, n) || !readable((void *)(p + delta), n))
		return 0;
	for (size_t k = 0; k + sizeof(uintptr_t) <= n; k += sizeof(uintptr_t)) {
		uintptr_t was = *(uintptr_t *)(p + k), now = *(uintptr_t *)(p + delta + k);
		if (now != was && now - was != (uintptr_t)delta)
			return 0;
	}
	return 1;
}

// The call in __wrap_ffi_call, for standin_stale (called back from standinMoveStack).
static struct {
	ffi_cif *cif;
	void *rvalue;
	void **avalue;
} current;

// stalereads says what libffi would read from the goroutine's old stack: the argument type
// array, the argument array, an argument, the result slot.
static int stalereads(ffi_cif *cif, void *rvalue, void **avalue, uintptr_t before, intptr_t delta) {
	char *w = standin_rec.stalewhat;
	size_t n = sizeof standin_rec.stalewhat;
	if (onoldstack((uintptr_t)cif->arg_types, cif->nargs * sizeof(ffi_type *), before, delta))
		return snprintf(w, n, "the argument type array (%u entries at %p)", cif->nargs, (void *)cif->arg_types), 1;
	if (onoldstack((uintptr_t)avalue, cif->nargs * sizeof(void *), before, delta))
		return snprintf(w, n, "the argument array (%u entries at %p)", cif->nargs, (void *)avalue), 1;
	for (unsigned i = 0; i < cif->nargs; i++)
		if (onoldstack((uintptr_t)avalue[i], cif->arg_types[i]->size, before, delta))
			return snprintf(w, n, "argument %u (%zu bytes at %p)", i, cif->arg_types[i]->size, avalue[i]), 1;
	if (onoldstack((uintptr_t)rvalue, cif->rtype->size, before, delta))
		return snprintf(w, n, "the result slot (%p)", rvalue), 1;
	return 0;
}

void __wrap_ffi_call(ffi_cif *cif, void (*fn)(void), void *rvalue, void **avalue) {
	standin_rec.rvalue = rvalue;
	standin_rec.rsize = (int)snap.rcopy.size;
	standin_rec.rnarrow = narrowint(&snap.rcopy);
	window();
	// The caller's goroutine stack moves now, as it may between darwinkit taking the
	// uintptrs it hands C and the call (a morestack, or a shrink for the GC, in
	// _cgoCheckPointer or the _Cfunc_ prologue).
	current.cif = cif;
	current.rvalue = rvalue;
	current.avalue = avalue;
	if (standin_move_on)
		standin_rec.moves += standinMoveStack();
	if (standin_rec.stale)
		return; // libffi would read freed memory, reused by the next stack taken from the pool
	if (typeschanged(cif)) {
		// libffi would marshal the arguments by these types (on aarch64 an unknown type
		// code is abort()); the call is not made.
		standin_rec.typesdead++;
		return;
	}
	__real_ffi_call(cif, fn, rvalue, avalue);
}

// standin_stale is called by standinMoveStack right after the goroutine stack moved from
// before to after (the old one freed, not yet reused): it records whether what libffi is
// about to read is on the old stack.
void standin_stale(uintptr_t before, uintptr_t after) {
	if (stalereads(current.cif, current.rvalue, current.avalue, before, (intptr_t)(after - before)))
		standin_rec.stale++;
}
