// A stand-in for a machine without libhiredis, loaded with LD_PRELOAD: dlopen of any hiredis
// library fails as it would where none is installed; everything else is opened as usual.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

void* dlopen(const char* name, int flags) {
    static void* (*real)(const char*, int);
    if (!real) {
        void* sym = dlsym(RTLD_NEXT, "dlopen");
        memcpy(&real, &sym, sizeof real); /* ISO C has no object-to-function pointer cast */
    }
    if (name && strstr(name, "libhiredis"))
        return NULL;
    return real(name, flags);
}
