// Stand-in for <objc/runtime.h>: the two types darwinkit's objc preambles name.
#ifndef STANDIN_OBJC_RUNTIME_H
#define STANDIN_OBJC_RUNTIME_H
typedef struct objc_selector *SEL;
typedef struct {
	const char *name;
	const char *value;
} objc_property_attribute_t;
struct objc_method_description {
	SEL name;
	char *types;
};
#endif
