// standin.h: a stand-in for the Objective-C runtime under darwinkit's objc package, for
// running darwinkit's own objc.Call and objc/ffi code on Linux against Debian's libffi
// (ffi_calllayer_test.go builds it). Objects are C structs whose first word is their
// class (isa), as in the real runtime; a class answers a selector with the IMP of the
// message being replayed; selectors are interned C strings; an NSString is a C string.
#ifndef STANDIN_H
#define STANDIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STANDIN_MAXARGS 8
#define STANDIN_ARGBYTES 32

// What the last message did, read by the driver after each objc.Call.
struct standin_record {
	int imp;     // the index of the IMP that ran (-1: none ran)
	int calls;   // IMPs run since the reset
	void *self;  // its receiver
	void *cmd;   // its selector
	int nargs;   // arguments after self and _cmd
	int argsize[STANDIN_MAXARGS];
	unsigned char arg[STANDIN_MAXARGS][STANDIN_ARGBYTES]; // each argument's bytes as received
	void *rvalue;   // the result address darwinkit gave ffi_call
	int rsize;      // the cif's result type size
	int rnarrow;    // the result is an integer narrower than ffi_arg: libffi stores a whole ffi_arg
	int windows;    // windows the Go helper served (it ran between the call's start and libffi)
	int timeouts;   // windows the helper did not serve within 10 s
	int typesdead;  // argument or result types changed between ffi_prep_cif and ffi_call
	char typeswhat[160];
	int prepped;    // ffi_prep_cif calls since the reset
	int moves;      // times the goroutine stack moved in standinMoveStack
	int stale;      // what libffi would read is on the stack the goroutine left
	char stalewhat[160];
	int unexpected; // stand-in functions called that the call path must not reach
};
extern struct standin_record standin_rec;

// The message the driver replays now: its selector and the index of its IMP.
extern const char *standin_expect_sel;
extern int standin_expect_imp;

// The window: __wrap_ffi_call asks the Go helper goroutine to run (guard bytes beside the
// result slot, then a garbage collection) while this call is inside C, as another goroutine
// and the collector can at any time, and waits until it has.
extern volatile int standin_window_on;

// Whether this call moves the goroutine stack in the window (standinMoveStack, driver.go).
extern int standin_move_on;
extern int standin_window_req;
extern int standin_window_done;

void standin_reset(void);
void standin_stale(uintptr_t lo, uintptr_t hi);
void *standin_object(int i);

// Used by the generated IMPs (sigs.c).
void standin_enter(int imp, void *self, void *cmd, int nargs);
void standin_arg(int i, const void *p, size_t n);
extern void *standin_imps[];
extern const char *standin_sels[];
extern const int standin_nimps;

#endif
