package corefoundation

type NotificationName StringRef
type TypeRef uintptr
