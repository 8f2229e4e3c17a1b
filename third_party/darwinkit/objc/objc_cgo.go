// Copyright 2021 Liu Dong. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package objc

// #cgo CFLAGS: -x objective-c -Wno-unguarded-availability-new
// #cgo LDFLAGS: -framework Foundation -framework CoreFoundation
import "C"
