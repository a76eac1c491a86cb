#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>
#include "czstd.h"

static struct {
    ZSTD_CCtx *(*createCCtx)(void);
    size_t (*freeCCtx)(ZSTD_CCtx *);
    size_t (*CCtx_setParameter)(ZSTD_CCtx *, ZSTD_cParameter, int);
    size_t (*CCtx_refPrefix)(ZSTD_CCtx *, const void *, size_t);
    size_t (*compress2)(ZSTD_CCtx *, void *, size_t, const void *, size_t);
    size_t (*compressBound)(size_t);
    ZSTD_DCtx *(*createDCtx)(void);
    size_t (*freeDCtx)(ZSTD_DCtx *);
    size_t (*DCtx_setParameter)(ZSTD_DCtx *, ZSTD_dParameter, int);
    size_t (*DCtx_refPrefix)(ZSTD_DCtx *, const void *, size_t);
    size_t (*decompressStream)(ZSTD_DStream *, ZSTD_outBuffer *, ZSTD_inBuffer *);
    size_t (*findFrameCompressedSize)(const void *, size_t);
    unsigned (*isError)(size_t);
    const char *(*getErrorName)(size_t);
} fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_error[512];

#define BIND(field, name)                                                        \
    if (!(*(void **)(&fn.field) = dlsym(lib, name))) {                           \
        snprintf(load_error, sizeof load_error, "libzstd lacks %s", name);       \
        return;                                                                  \
    }

static void load(void) {
    void *lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "cannot load libzstd.so.1 (install libzstd1): %s", dlerror());
        return;
    }
    BIND(createCCtx, "ZSTD_createCCtx")
    BIND(freeCCtx, "ZSTD_freeCCtx")
    BIND(CCtx_setParameter, "ZSTD_CCtx_setParameter")
    BIND(CCtx_refPrefix, "ZSTD_CCtx_refPrefix")
    BIND(compress2, "ZSTD_compress2")
    BIND(compressBound, "ZSTD_compressBound")
    BIND(createDCtx, "ZSTD_createDCtx")
    BIND(freeDCtx, "ZSTD_freeDCtx")
    BIND(DCtx_setParameter, "ZSTD_DCtx_setParameter")
    BIND(DCtx_refPrefix, "ZSTD_DCtx_refPrefix")
    BIND(decompressStream, "ZSTD_decompressStream")
    BIND(findFrameCompressedSize, "ZSTD_findFrameCompressedSize")
    BIND(isError, "ZSTD_isError")
    BIND(getErrorName, "ZSTD_getErrorName")
    loaded = 1;
}

int czstd_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *czstd_load_error(void) { return load_error; }

size_t czstd_bound(size_t size) { return fn.compressBound(size); }

size_t czstd_frame_size(const void *source, size_t size) {
    size_t length = fn.findFrameCompressedSize(source, size);
    return fn.isError(length) ? 0 : length;
}

#define CHECK(call)                                                              \
    do {                                                                         \
        size_t status = (call);                                                  \
        if (fn.isError(status)) {                                                \
            *error = fn.getErrorName(status);                                    \
            fn.freeCCtx(cctx);                                                   \
            return 0;                                                            \
        }                                                                        \
    } while (0)

size_t czstd_compress(void *destination, size_t capacity, const void *source, size_t size,
                      const void *prefix, size_t prefix_size, int level, int window_log,
                      int long_matching, const char **error) {
    ZSTD_CCtx *cctx = fn.createCCtx();
    if (!cctx) {
        *error = "out of memory";
        return 0;
    }
    CHECK(fn.CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level));
    CHECK(fn.CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1));
    CHECK(fn.CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0));
    if (window_log > 0) CHECK(fn.CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log));
    if (long_matching) CHECK(fn.CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, 1));
    if (prefix) CHECK(fn.CCtx_refPrefix(cctx, prefix, prefix_size));
    size_t written = fn.compress2(cctx, destination, capacity, source, size);
    CHECK(written);
    fn.freeCCtx(cctx);
    return written;
}

struct czstd_decoder {
    ZSTD_DCtx *dctx;
};

struct czstd_decoder *czstd_decoder_new(int window_log_max, const void *prefix, size_t prefix_size, const char **error) {
    ZSTD_DCtx *dctx = fn.createDCtx();
    if (!dctx) {
        *error = "out of memory";
        return NULL;
    }
    size_t status = fn.DCtx_setParameter(dctx, ZSTD_d_windowLogMax, window_log_max);
    if (!fn.isError(status) && prefix) status = fn.DCtx_refPrefix(dctx, prefix, prefix_size);
    if (fn.isError(status)) {
        *error = fn.getErrorName(status);
        fn.freeDCtx(dctx);
        return NULL;
    }
    struct czstd_decoder *decoder = malloc(sizeof *decoder);
    if (!decoder) {
        fn.freeDCtx(dctx);
        *error = "out of memory";
        return NULL;
    }
    decoder->dctx = dctx;
    return decoder;
}

void czstd_decoder_free(struct czstd_decoder *decoder) {
    if (!decoder) return;
    fn.freeDCtx(decoder->dctx);
    free(decoder);
}

long czstd_decode(struct czstd_decoder *decoder, void *output, size_t output_capacity, size_t *output_pos,
                  const void *input, size_t input_size, size_t *input_pos, const char **error) {
    ZSTD_outBuffer out = {output, output_capacity, *output_pos};
    ZSTD_inBuffer in = {input, input_size, *input_pos};
    size_t status = fn.decompressStream(decoder->dctx, &out, &in);
    *output_pos = out.pos;
    *input_pos = in.pos;
    if (fn.isError(status)) {
        *error = fn.getErrorName(status);
        return -1;
    }
    return status > (size_t)0x7fffffff ? 0x7fffffff : (long)status;
}
