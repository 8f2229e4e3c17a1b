// Copyright 2021 Liu Dong. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Gain low-level access to the Objective-C runtime and the Objective-C root types.
//
// If it's not documented it's not meant to be used directly, but you can find the
// equivalent type or function in the Apple documentation.
//
// [Apple Documentation]
//
// [Apple Documentation]: https://developer.apple.com/documentation/objectivec?language=objc
package objc
