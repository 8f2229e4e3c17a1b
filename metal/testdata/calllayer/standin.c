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

// What libffi will read when the call is made, taken in __wrap_ffi_call before the stack
// moves (the sizes are those ffi_prep_cif was given, copied then): the argument type array,
// the argument array, each argument, the result slot.
#define NREGIONS (2 + SNAPMAX + 1)
static struct {
	int n;
	struct {
		uintptr_t p;
		size_t size;
		char what[64];
	} r[NREGIONS];
} reads;

static void addread(const void *p, size_t size, const char *what) {
	if (reads.n == NREGIONS)
		abort();
	reads.r[reads.n].p = (uintptr_t)p;
	reads.r[reads.n].size = size;
	snprintf(reads.r[reads.n].what, sizeof reads.r[reads.n].what, "%s", what);
	reads.n++;
}

static void takereads(ffi_cif *cif, void *rvalue, void **avalue) {
	char what[32];
	reads.n = 0;
	addread(cif->arg_types, snap.nargs * sizeof(ffi_type *), "the argument type array");
	addread(avalue, snap.nargs * sizeof(void *), "the argument array");
	for (unsigned i = 0; i < snap.nargs; i++) {
		snprintf(what, sizeof what, "argument %u", i);
		addread(avalue[i], snap.acopy[i].size, what);
	}
	addread(rvalue, snap.rcopy.size, "the result slot");
}

void __wrap_ffi_call(ffi_cif *cif, void (*fn)(void), void *rvalue, void **avalue) {
	standin_rec.rvalue = rvalue;
	standin_rec.rsize = (int)snap.rcopy.size;
	standin_rec.rnarrow = narrowint(&snap.rcopy);
	window();
	// The caller's goroutine stack moves now, as it may between darwinkit taking the
	// uintptrs it hands C and the call (a morestack, or a shrink for the GC, in
	// _cgoCheckPointer or the _Cfunc_ prologue).
	if (standin_move_on) {
		takereads(cif, rvalue, avalue);
		standin_rec.moves += standinMoveStack();
	}
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

// standin_stale is called by standinMoveStack, which is about to move the goroutine stack
// [lo, hi) the call was made on: what libffi reads there would be the stack left behind. Only
// addresses are compared; nothing the stack held is read.
void standin_stale(uintptr_t lo, uintptr_t hi) {
	for (int i = 0; i < reads.n; i++) {
		uintptr_t p = reads.r[i].p;
		size_t n = reads.r[i].size;
		if (n > 0 && p < hi && p + n > lo) {
			standin_rec.stale++;
			snprintf(standin_rec.stalewhat, sizeof standin_rec.stalewhat, "%s (%zu bytes at %#lx, on the stack [%#lx, %#lx))",
			         reads.r[i].what, n, (unsigned long)p, (unsigned long)lo, (unsigned long)hi);
			return;
		}
	}
}
