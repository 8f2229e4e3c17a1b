//go:build !linux

// tiledata_other_amd64.go: no AMX off Linux (no Mac has AMX; other systems are not asked).
package kernel

// requestTileData is false: the AMX path is never taken here.
func requestTileData() bool { return false }
