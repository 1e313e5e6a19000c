/* The six functions of libltdl that unixODBC's driver manager calls to load a driver, on
 * dlopen. Debian's libltdl.a is not position-independent, so it cannot go into the extension,
 * and its shared library asks for glibc 2.34; on Linux libltdl is this thin anyway. Hidden:
 * nothing outside the extension sees them. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN __attribute__((visibility("hidden")))

typedef void* lt_dlhandle;

static char* search_path; /* ':'-separated folders for names without a '/' */

HIDDEN int lt_dlinit(void) { return 0; }

HIDDEN int lt_dlsetsearchpath(const char* path) {
  free(search_path);
  search_path = path && *path ? strdup(path) : NULL;
  return 0;
}

HIDDEN lt_dlhandle lt_dlopen(const char* filename) {
  if (filename == NULL) return dlopen(NULL, RTLD_LAZY);
  if (strchr(filename, '/') == NULL && search_path != NULL) {
    const size_t name_length = strlen(filename);
    for (const char* dir = search_path; *dir;) {
      const char* end = strchr(dir, ':');
      const size_t length = end ? (size_t)(end - dir) : strlen(dir);
      char* candidate = malloc(length + name_length + 2);
      if (candidate == NULL) return NULL;
      memcpy(candidate, dir, length);
      candidate[length] = '/';
      memcpy(candidate + length + 1, filename, name_length + 1);
      void* handle = dlopen(candidate, RTLD_LAZY | RTLD_LOCAL);
      free(candidate);
      if (handle != NULL) return handle;
      dir += length + (end ? 1 : 0);
    }
  }
  return dlopen(filename, RTLD_LAZY | RTLD_LOCAL);
}

HIDDEN void* lt_dlsym(lt_dlhandle handle, const char* name) { return dlsym(handle, name); }

HIDDEN int lt_dlclose(lt_dlhandle handle) { return dlclose(handle); }

HIDDEN const char* lt_dlerror(void) { return dlerror(); }
