package iosurface

// Data type representing an IOSurface opaque object. [Full Topic]
//
// [Full Topic]: https://developer.apple.com/documentation/iosurface/iosurfaceref?language=objc
type Ref uintptr
