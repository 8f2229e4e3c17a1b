package ckpt

// RecordPrefaults makes the mapped residency's prefaults call f with each span instead of
// mapping it (the kernel maps pages around the ones asked for, so pages alone cannot tell which
// were asked); restore puts the real one back.
func RecordPrefaults(f func([]byte)) (restore func()) {
	saved := prefaultSpan
	prefaultSpan = f
	return func() { prefaultSpan = saved }
}

// WaitPrefault waits for the mapped residency's prefault in flight (none: returns at once).
func WaitPrefault(r Residency) {
	if m, ok := r.(*mappedRes); ok {
		m.mu.Lock()
		m.ahead.Wait()
		m.mu.Unlock()
	}
}

// PrefaultPages is the mapped residency's prefault of one span (the kernel's, not a recorder).
var PrefaultPages = prefault
