// glibc malloc tuning (mallopt), for the allocator setting of Herald processes.
#if defined(__linux__)
#include <malloc.h>
#endif
