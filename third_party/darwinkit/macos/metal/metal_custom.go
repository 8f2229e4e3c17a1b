package metal

import "unsafe"

type AutoreleasedComputePipelineReflection unsafe.Pointer
type AutoreleasedRenderPipelineReflection unsafe.Pointer

type Coordinate2D = SamplePosition
