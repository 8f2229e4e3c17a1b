//go:build darwin

package metal

// device_darwin.go: the system's default Metal device. MTLCreateSystemDefaultDevice is a C
// function, not a message, so this is the one cgo call of the backend. CoreGraphics is
// linked because without it a command-line process gets no default device.
//
// Invariant: the pointer returned is +1 retained (a Create function); the caller owns it and
// releases it in Close. Mutation that would silently break it: Retain()ing it again here —
// the device would never be freed (a leak, no crash, nothing visible).

/*
#cgo CFLAGS: -x objective-c
#cgo LDFLAGS: -framework Metal -framework CoreGraphics
#import <Metal/Metal.h>

static void* ts_default_device(void) {
	return (void*)MTLCreateSystemDefaultDevice();
}
*/
import "C"

import (
	"unsafe"

	"github.com/progrium/darwinkit/objc"
)

// defaultDevice returns the default device (owned, +1) and whether there is one.
func defaultDevice() (mtlDevice, bool) {
	ptr := unsafe.Pointer(C.ts_default_device())
	if ptr == nil {
		return mtlDevice{}, false
	}
	return mtlDevice{Object: objc.ObjectFrom(ptr)}, true
}
