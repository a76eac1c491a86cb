#ifndef CZSTD_SHIM_H
#define CZSTD_SHIM_H

#include <stddef.h>

/* libzstd is loaded with dlopen on first use rather than linked, as libcurl is (ccurl.h): the
   release binary has little room under its size bar (F), and only `routes --compress` and syncs
   from a remote that publishes compressed forms need it. Its header (libzstd-dev) gives only the
   constants; every call goes through the loaded library.
   czstd_load returns 1 when libzstd is usable; every other function requires it. */
int czstd_load(void);
const char *czstd_load_error(void);

/* One-shot compression of `source` into `destination` (capacity from czstd_bound) at `level`.
   With `prefix` (a patch's base, may be NULL) the frame refers to it (--patch-from); `window_log`
   (0: libzstd's choice) must then cover the prefix and the source, and `long_matching` turns on
   long-distance matching. The frame records its content size. Returns the compressed size, or 0
   with `error` set to libzstd's reason. */
size_t czstd_compress(void *destination, size_t capacity, const void *source, size_t size,
                      const void *prefix, size_t prefix_size, int level, int window_log,
                      int long_matching, const char **error);
size_t czstd_bound(size_t size);
/* The length of the whole frame at the start of `source` (its headers and blocks, read without
   decoding: a patch's frame cannot be decoded without its base), or 0 when it is not one. */
size_t czstd_frame_size(const void *source, size_t size);

/* A streaming decoder whose window may not exceed 2^window_log_max bytes (frames asking for more
   fail), optionally referring to `prefix` for one frame (the base of a patch). The prefix must
   stay in place and unchanged until the decoder is freed. NULL with `error` set on failure. */
struct czstd_decoder;
struct czstd_decoder *czstd_decoder_new(int window_log_max, const void *prefix, size_t prefix_size, const char **error);
void czstd_decoder_free(struct czstd_decoder *decoder);
/* Decodes from input[*input_pos..<input_size] into output[*output_pos..<output_capacity], moving
   both positions. Returns 0 when a frame is complete, a positive hint while more is expected, or
   -1 with `error` set (corrupt input, a window too large, a wrong base). */
long czstd_decode(struct czstd_decoder *decoder, void *output, size_t output_capacity, size_t *output_pos,
                  const void *input, size_t input_size, size_t *input_pos, const char **error);

#endif
