#ifndef CPLATFORM_H
#define CPLATFORM_H
#include <stddef.h>

/* glibc declares syncfs only under _GNU_SOURCE, which Swift's Glibc module does not set. */
int cplatform_syncfs(int fd);

/* Hands the free parts of every malloc arena back to the kernel (glibc's malloc_trim, which
   Swift's Glibc module does not declare). */
void cplatform_release_free_memory(void);

/* Drops this process's pages of private file mappings (its code and its libraries') from
   memory with MADV_PAGEOUT (Linux 5.4+; a no-op before). The kernel maps 64 KiB around every
   code fault and keeps it mapped, so start-up and a sync leave some 20 MiB of code resident
   that an idle daemon does not run; the pages it does run come back from the page cache or
   the file when touched. Pages shared with another process are left alone by the kernel. */
void cplatform_release_code_pages(void);

/* One-shot gzip (RFC 1952) of a buffer with zlib; deflateInit2 is a macro Swift cannot call.
   Returns the compressed size, or 0 when `capacity` is too small or zlib fails. */
size_t cplatform_gzip(const void *input, size_t length, void *output, size_t capacity, int level);

/* Upper bound of the gzip output for `length` input bytes. */
size_t cplatform_gzip_bound(size_t length);

/* Streaming reads of a file that may be gzip-compressed (one member or several, as rotated logs
   are) or plain: zlib's gzread reads either. Open returns NULL on failure (errno set); read
   returns the bytes read, 0 at the end, -1 on an error that cplatform_gzerror describes. */
void *cplatform_gzopen(const char *path);
/* The same over a descriptor already open (its own copy: gzclose closes that one): a FIFO opened
   twice would wait for a second writer that never comes. */
void *cplatform_gzdopen(int fd);
int cplatform_gzread(void *file, void *buffer, unsigned length);
const char *cplatform_gzerror(void *file);
void cplatform_gzclose(void *file);

/* How far into the compressed file reading has got (zlib's gzoffset), for a progress line. */
long long cplatform_gzoffset(void *file);

#endif
