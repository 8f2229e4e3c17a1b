// darwinkit includes <ffi/ffi.h> (macOS's layout); Debian has <ffi.h>.
#include <ffi.h>
