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
    /* The caller's name for the message, given back with its digest. */
    uint64_t tag;
} multimd5_input;

typedef struct {
    uint64_t tag;
    uint8_t digest[16];
} multimd5_output;

/* Lanes and their MD5 state, kept from one multimd5_lanes_run to the next. */
typedef struct multimd5_lanes multimd5_lanes;

/* 1 when this CPU has the vector kernels (x86-64 with AVX2); callers hash one at a time otherwise. */
int multimd5_available(void);

/* The kernel new lanes use: 2 = AVX2 (eight lanes), 3 = AVX-512 (sixteen lanes, one
   instruction per rotate and per round function); 0 = none. The best this CPU has unless lowered with multimd5_set_level, which
   returns the level in force (tests run each kernel the CPU can). */
int multimd5_level(void);
int multimd5_set_level(int level);

/* Empty lanes at the current level; NULL when the CPU has no vector kernel (or out of memory). */
multimd5_lanes *multimd5_lanes_create(void);
void multimd5_lanes_destroy(multimd5_lanes *lanes);

/* Messages started and not yet finished. */
int multimd5_lanes_held(const multimd5_lanes *lanes);

/* Starts every input, in order, and writes the digest of each message that finishes to `out`
   (room for count + 16), returning how many. With `finish`, every message finishes, those held
   from earlier calls too. Without it, the call returns once all inputs are in lanes and one lane
   has run dry: a long message then keeps its lane and goes on beside the next call's messages,
   instead of the vector unit running part empty while it ends alone. A message's bytes must
   stay where they are until its digest is given back. */
size_t multimd5_lanes_run(multimd5_lanes *lanes, const multimd5_input *inputs, size_t count, int finish,
                          multimd5_output *out);

#endif
