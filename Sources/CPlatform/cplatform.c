#define _GNU_SOURCE
#include <malloc.h>
#include <unistd.h>
#include <zlib.h>
#include "cplatform.h"

int cplatform_syncfs(int fd) { return syncfs(fd); }

void cplatform_release_free_memory(void) { (void)malloc_trim(0); }

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
