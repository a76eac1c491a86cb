#define _GNU_SOURCE
#include <unistd.h>
#include "cplatform.h"

int cplatform_syncfs(int fd) { return syncfs(fd); }
