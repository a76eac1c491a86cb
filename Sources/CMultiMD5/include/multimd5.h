#ifndef MULTIMD5_H
#define MULTIMD5_H

#include <stddef.h>
#include <stdint.h>

/* MD5 of many independent messages at once, one per 32-bit lane of an AVX2 or AVX-512 register.
   MD5 is one long dependency chain, so a single message cannot go faster than about 650 MB/s
   on one core; eight messages side by side fill the vector unit instead. Seeding and syncing
   verify thousands of files, which is exactly that shape. */
typedef struct {
    const uint8_t *data;
    size_t length;
    uint8_t digest[16];
} multimd5_job;

/* 1 when this CPU can run multimd5_hash (x86-64 with AVX2); callers hash one at a time otherwise. */
int multimd5_available(void);

/* The kernel multimd5_hash uses: 2 = AVX2 (eight lanes), 3 = AVX-512 (sixteen lanes, one
   instruction per rotate and per round function); 0 = none. The best this CPU has unless lowered with multimd5_set_level, which
   returns the level in force (tests run each kernel the CPU can). */
int multimd5_level(void);
int multimd5_set_level(int level);

/* Fills jobs[i].digest for every job. Requires multimd5_available(). */
void multimd5_hash(multimd5_job *jobs, size_t count);

#endif
