#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include "cplatform.h"

int cplatform_syncfs(int fd) { return syncfs(fd); }

void cplatform_release_free_memory(void) { (void)malloc_trim(0); }

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

void cplatform_release_code_pages(void) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return;
    char line[4096];
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char perms[5];
        int path = 0;
        if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, perms, &path) < 3 || path == 0) continue;
        /* Private file mappings only (code, constants, data never written): their pages come
           back from the file when touched; the few written ones stay unless there is swap. */
        if (line[path] != '/' || perms[3] != 'p') continue;
        (void)madvise((void *)start, end - start, MADV_PAGEOUT);
    }
    fclose(maps);
}

size_t cplatform_gzip_bound(size_t length) {
    /* deflateBound plus the gzip header and trailer. */
    return compressBound(length) + 32;
}

size_t cplatform_gzip(const void *input, size_t length, void *output, size_t capacity, int level) {
    z_stream stream = {0};
    /* windowBits 15 + 16 selects the gzip wrapper. */
    if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)length;
    stream.next_out = (Bytef *)output;
    stream.avail_out = (uInt)capacity;
    int result = deflate(&stream, Z_FINISH);
    size_t produced = stream.total_out;
    deflateEnd(&stream);
    return result == Z_STREAM_END ? produced : 0;
}

void *cplatform_gzopen(const char *path) {
    gzFile file = gzopen(path, "rb");
    if (file) gzbuffer(file, 256 << 10);
    return file;
}

void *cplatform_gzdopen(int fd) {
    int own = dup(fd);
    if (own < 0) return NULL;
    gzFile file = gzdopen(own, "rb");
    if (!file) { close(own); return NULL; }
    gzbuffer(file, 256 << 10);
    return file;
}

int cplatform_gzread(void *file, void *buffer, unsigned length) {
    return gzread((gzFile)file, buffer, length);
}

const char *cplatform_gzerror(void *file) {
    int code = 0;
    return gzerror((gzFile)file, &code);
}

void cplatform_gzclose(void *file) {
    gzclose((gzFile)file);
}

long long cplatform_gzoffset(void *file) {
    return (long long)gzoffset((gzFile)file);
}
