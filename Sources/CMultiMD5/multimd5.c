#include "multimd5.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

/* The most lanes a kernel runs: sixteen with AVX-512, eight with AVX2. */
#define LANES 16

static const uint32_t K[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
static const int S[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};
static const uint32_t IV[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};

/* Where a lane is in its message: whole 64-byte blocks read in place, then the last partial
   block and the padding (one or two blocks) from a small buffer of its own. */
typedef struct {
    int busy;
    uint64_t tag;
    const uint8_t *next;
    size_t direct_left;
    size_t tail_left;
    size_t tail_total;
    uint8_t tail[128];
} lane;

static void lane_start(lane *l, const multimd5_input *input, uint32_t state[4][LANES], int index) {
    l->busy = 1;
    l->tag = input->tag;
    l->next = input->data;
    l->direct_left = input->length / 64;
    size_t rest = input->length % 64;
    memset(l->tail, 0, sizeof l->tail);
    if (rest) memcpy(l->tail, input->data + input->length - rest, rest);
    l->tail[rest] = 0x80;
    l->tail_total = l->tail_left = rest < 56 ? 1 : 2;
    uint64_t bits = (uint64_t)input->length * 8;
    memcpy(l->tail + l->tail_total * 64 - 8, &bits, 8); /* little-endian, as MD5 wants */
    for (int w = 0; w < 4; w++) state[w][index] = IV[w];
}

static size_t lane_blocks_left(const lane *l) { return l->busy ? l->direct_left + l->tail_left : 0; }

static const uint8_t *lane_block(lane *l) {
    if (l->direct_left) return l->next;
    return l->tail + 64 * (l->tail_total - l->tail_left);
}

/* Blocks left that lie one after another in memory: the rest of the message in place, or the tail. */
static size_t lane_run(const lane *l) { return l->direct_left ? l->direct_left : l->tail_left; }

/* Moves on by n blocks, at most lane_run(l). */
static void lane_advance(lane *l, size_t n) {
    if (l->direct_left) {
        l->direct_left -= n;
        l->next += 64 * n;
    } else {
        l->tail_left -= n;
    }
}

/* One MD5 step for all lanes: a = b + rotl(a + f(b, c, d) + K[i] + m[g], s). VADD, VSET1, ROTL
   and the round functions are defined per instruction set below. */
#define STEP(f, a, b, c, d, i, g, s) a = VADD(b, ROTL(VADD(VADD(a, f(b, c, d)), VADD(VSET1((int)K[i]), m[g])), s))
/* The shifts are literals, not S[i]: AVX-512's rotate takes an immediate even in debug builds. */
#define ROUND4(f, i, g0, g1, g2, g3, s0, s1, s2, s3) \
    STEP(f, a, b, c, d, i, g0, s0);                  \
    STEP(f, d, a, b, c, i + 1, g1, s1);              \
    STEP(f, c, d, a, b, i + 2, g2, s2);              \
    STEP(f, b, c, d, a, i + 3, g3, s3)

/* m[w] = word w (of eight, from byte offset `offset`) of every lane's block: an 8x8 transpose. */
__attribute__((target("avx2"))) static inline void load_transposed(__m256i m[8], const uint8_t *const blocks[8], int offset) {
    __m256i r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_si256((const __m256i *)(blocks[i] + offset));
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);     /* l0w0 l1w0 l0w1 l1w1 | l0w4 l1w4 l0w5 l1w5 */
        t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]); /* l0w2 l1w2 l0w3 l1w3 | l0w6 l1w6 l0w7 l1w7 */
    }
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);         /* words 0 and 4 of four lanes */
        r[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);     /* words 1 and 5 */
        r[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]); /* words 2 and 6 */
        r[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]); /* words 3 and 7 */
    }
    for (int w = 0; w < 4; w++) {
        m[w] = _mm256_permute2x128_si256(r[w], r[w + 4], 0x20);
        m[w + 4] = _mm256_permute2x128_si256(r[w], r[w + 4], 0x31);
    }
}

/* The 64 steps, on a, b, c, d and the message words m[16]. */
#define MD5_ROUNDS                                \
    ROUND4(F, 0, 0, 1, 2, 3, 7, 12, 17, 22);      \
    ROUND4(F, 4, 4, 5, 6, 7, 7, 12, 17, 22);      \
    ROUND4(F, 8, 8, 9, 10, 11, 7, 12, 17, 22);    \
    ROUND4(F, 12, 12, 13, 14, 15, 7, 12, 17, 22); \
    ROUND4(G, 16, 1, 6, 11, 0, 5, 9, 14, 20);     \
    ROUND4(G, 20, 5, 10, 15, 4, 5, 9, 14, 20);    \
    ROUND4(G, 24, 9, 14, 3, 8, 5, 9, 14, 20);     \
    ROUND4(G, 28, 13, 2, 7, 12, 5, 9, 14, 20);    \
    ROUND4(H, 32, 5, 8, 11, 14, 4, 11, 16, 23);   \
    ROUND4(H, 36, 1, 4, 7, 10, 4, 11, 16, 23);    \
    ROUND4(H, 40, 13, 0, 3, 6, 4, 11, 16, 23);    \
    ROUND4(H, 44, 9, 12, 15, 2, 4, 11, 16, 23);   \
    ROUND4(I, 48, 0, 7, 14, 5, 6, 10, 15, 21);    \
    ROUND4(I, 52, 12, 3, 10, 1, 6, 10, 15, 21);   \
    ROUND4(I, 56, 8, 15, 6, 13, 6, 10, 15, 21);   \
    ROUND4(I, 60, 4, 11, 2, 9, 6, 10, 15, 21)

/* AVX2, eight lanes: a rotate is two shifts and an or, a round function two or three logic operations. */
#define VADD _mm256_add_epi32
#define VSET1 _mm256_set1_epi32
#define ROTL(x, n) _mm256_or_si256(_mm256_slli_epi32((x), (n)), _mm256_srli_epi32((x), 32 - (n)))
#define F(b, c, d) _mm256_xor_si256(d, _mm256_and_si256(b, _mm256_xor_si256(c, d)))
#define G(b, c, d) _mm256_xor_si256(c, _mm256_and_si256(d, _mm256_xor_si256(b, c)))
#define H(b, c, d) _mm256_xor_si256(_mm256_xor_si256(b, c), d)
#define I(b, c, d) _mm256_xor_si256(c, _mm256_or_si256(b, _mm256_xor_si256(d, _mm256_set1_epi32(-1))))
__attribute__((target("avx2"))) static void compress8(uint32_t state[4][LANES], const uint8_t *blocks[LANES]) {
    __m256i m[16];
    load_transposed(m, blocks, 0);
    load_transposed(m + 8, blocks, 32);
    __m256i a = _mm256_loadu_si256((const __m256i *)state[0]);
    __m256i b = _mm256_loadu_si256((const __m256i *)state[1]);
    __m256i c = _mm256_loadu_si256((const __m256i *)state[2]);
    __m256i d = _mm256_loadu_si256((const __m256i *)state[3]);
    const __m256i a0 = a, b0 = b, c0 = c, d0 = d;
    MD5_ROUNDS;
    _mm256_storeu_si256((__m256i *)state[0], _mm256_add_epi32(a, a0));
    _mm256_storeu_si256((__m256i *)state[1], _mm256_add_epi32(b, b0));
    _mm256_storeu_si256((__m256i *)state[2], _mm256_add_epi32(c, c0));
    _mm256_storeu_si256((__m256i *)state[3], _mm256_add_epi32(d, d0));
}
#undef VADD
#undef VSET1
#undef ROTL
#undef F
#undef G
#undef H
#undef I

/* AVX-512, sixteen lanes: one instruction for a rotate (vprold) and for a round function
   (vpternlogd, whose immediate is its truth table over b = 0xF0, c = 0xCC, d = 0xAA). The steps
   are one dependency chain, so twice the lanes at the same latency is twice the work per step. */
#define VADD _mm512_add_epi32
#define VSET1 _mm512_set1_epi32
#define ROTL(x, n) _mm512_rol_epi32((x), (n))
#define F(b, c, d) _mm512_ternarylogic_epi32(b, c, d, 0xCA)
#define G(b, c, d) _mm512_ternarylogic_epi32(b, c, d, 0xE4)
#define H(b, c, d) _mm512_ternarylogic_epi32(b, c, d, 0x96)
#define I(b, c, d) _mm512_ternarylogic_epi32(b, c, d, 0x39)
__attribute__((target("avx2,avx512f"))) static void compress16(uint32_t state[4][LANES], const uint8_t *blocks[LANES]) {
    /* Two 8x8 transposes, each word's halves joined into one register. */
    __m256i low[16], high[16];
    load_transposed(low, blocks, 0);
    load_transposed(low + 8, blocks, 32);
    load_transposed(high, blocks + 8, 0);
    load_transposed(high + 8, blocks + 8, 32);
    __m512i m[16];
    for (int w = 0; w < 16; w++) m[w] = _mm512_inserti64x4(_mm512_castsi256_si512(low[w]), high[w], 1);
    __m512i a = _mm512_loadu_si512(state[0]);
    __m512i b = _mm512_loadu_si512(state[1]);
    __m512i c = _mm512_loadu_si512(state[2]);
    __m512i d = _mm512_loadu_si512(state[3]);
    const __m512i a0 = a, b0 = b, c0 = c, d0 = d;
    MD5_ROUNDS;
    _mm512_storeu_si512(state[0], _mm512_add_epi32(a, a0));
    _mm512_storeu_si512(state[1], _mm512_add_epi32(b, b0));
    _mm512_storeu_si512(state[2], _mm512_add_epi32(c, c0));
    _mm512_storeu_si512(state[3], _mm512_add_epi32(d, d0));
}

#define SF(b, c, d) (d ^ (b & (c ^ d)))
#define SG(b, c, d) (c ^ (d & (b ^ c)))
#define SH(b, c, d) (b ^ c ^ d)
#define SI(b, c, d) (c ^ (b | ~d))
#define SSTEP(f, a, b, c, d, i, g)                                 \
    do {                                                           \
        uint32_t t = a + f(b, c, d) + K[i] + m[g];                 \
        a = b + ((t << S[i]) | (t >> (32 - S[i])));                \
    } while (0)
#define SROUND4(f, i, g0, g1, g2, g3) \
    SSTEP(f, a, b, c, d, i, g0);      \
    SSTEP(f, d, a, b, c, i + 1, g1);  \
    SSTEP(f, c, d, a, b, i + 2, g2);  \
    SSTEP(f, b, c, d, a, i + 3, g3)

/* One lane on its own: the vector unit would run at an eighth (a sixteenth) of its width, slower than this. */
static void compress1(uint32_t state[4][LANES], int lane, const uint8_t *block) {
    uint32_t m[16];
    memcpy(m, block, 64);
    uint32_t a = state[0][lane], b = state[1][lane], c = state[2][lane], d = state[3][lane];
    SROUND4(SF, 0, 0, 1, 2, 3);
    SROUND4(SF, 4, 4, 5, 6, 7);
    SROUND4(SF, 8, 8, 9, 10, 11);
    SROUND4(SF, 12, 12, 13, 14, 15);
    SROUND4(SG, 16, 1, 6, 11, 0);
    SROUND4(SG, 20, 5, 10, 15, 4);
    SROUND4(SG, 24, 9, 14, 3, 8);
    SROUND4(SG, 28, 13, 2, 7, 12);
    SROUND4(SH, 32, 5, 8, 11, 14);
    SROUND4(SH, 36, 1, 4, 7, 10);
    SROUND4(SH, 40, 13, 0, 3, 6);
    SROUND4(SH, 44, 9, 12, 15, 2);
    SROUND4(SI, 48, 0, 7, 14, 5);
    SROUND4(SI, 52, 12, 3, 10, 1);
    SROUND4(SI, 56, 8, 15, 6, 13);
    SROUND4(SI, 60, 4, 11, 2, 9);
    state[0][lane] += a;
    state[1][lane] += b;
    state[2][lane] += c;
    state[3][lane] += d;
}

static int best_level(void) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) return 0;
    return __builtin_cpu_supports("avx512f") ? 3 : 2;
}

/* 0 until first asked. Written once per process in practice; a racing second writer stores the same value. */
static int level;

int multimd5_available(void) {
    if (!level) level = best_level();
    return level >= 2;
}

int multimd5_level(void) {
    multimd5_available();
    return level;
}

int multimd5_set_level(int wanted) {
    int best = best_level();
    level = wanted < best ? wanted : best;
    return level;
}

struct multimd5_lanes {
    int width;
    int held;
    uint32_t state[4][LANES];
    lane lanes[LANES];
};

multimd5_lanes *multimd5_lanes_create(void) {
    if (!multimd5_available()) return NULL;
    multimd5_lanes *lanes = calloc(1, sizeof *lanes);
    if (lanes) lanes->width = multimd5_level() >= 3 ? 16 : 8;
    return lanes;
}

void multimd5_lanes_destroy(multimd5_lanes *lanes) { free(lanes); }

int multimd5_lanes_held(const multimd5_lanes *lanes) { return lanes->held; }

size_t multimd5_lanes_run(multimd5_lanes *e, const multimd5_input *inputs, size_t count, int finish, multimd5_output *out) {
    static const uint8_t idle_block[64];
    const int width = e->width;
    lane *lanes = e->lanes;
    size_t next = 0, done = 0;
    for (;;) {
        /* Refill finished lanes, then run as many steps as every lane has blocks in a row for:
           each lane's block pointer then just moves on by 64 bytes a step. */
        size_t steps = SIZE_MAX;
        int active = 0;
        for (int i = 0; i < width; i++) {
            if (!lanes[i].busy && next < count) lane_start(&lanes[i], &inputs[next++], e->state, i);
            if (!lanes[i].busy) continue;
            active++;
            if (lane_run(&lanes[i]) < steps) steps = lane_run(&lanes[i]);
        }
        e->held = active;
        /* A lane has run dry and nothing is left to fill it: the rest wait in their lanes for
           the next call's messages, rather than run on with the vector unit part empty. */
        if (!active || (!finish && next == count && active < width)) return done;
        if (active == 1 && next == count) {
            for (int i = 0; i < width; i++) {
                while (lane_blocks_left(&lanes[i])) {
                    compress1(e->state, i, lane_block(&lanes[i]));
                    lane_advance(&lanes[i], 1);
                }
            }
            steps = 0;
        }
        const uint8_t *blocks[LANES];
        size_t stride[LANES];
        for (int i = 0; i < width; i++) {
            blocks[i] = lanes[i].busy ? lane_block(&lanes[i]) : idle_block;
            stride[i] = lanes[i].busy ? 64 : 0;
        }
        for (size_t step = 0; step < steps; step++) {
            if (width == 16) compress16(e->state, blocks); else compress8(e->state, blocks);
            for (int i = 0; i < width; i++) blocks[i] += stride[i];
        }
        for (int i = 0; i < width; i++) {
            if (lanes[i].busy) lane_advance(&lanes[i], steps);
        }
        for (int i = 0; i < width; i++) {
            if (lanes[i].busy && lane_blocks_left(&lanes[i]) == 0) {
                out[done].tag = lanes[i].tag;
                for (int w = 0; w < 4; w++) memcpy(out[done].digest + 4 * w, &e->state[w][i], 4);
                done++;
                lanes[i].busy = 0;
            }
        }
    }
}

#else

int multimd5_available(void) { return 0; }
int multimd5_level(void) { return 0; }
int multimd5_set_level(int wanted) { (void)wanted; return 0; }
multimd5_lanes *multimd5_lanes_create(void) { return NULL; }
void multimd5_lanes_destroy(multimd5_lanes *lanes) { (void)lanes; }
int multimd5_lanes_held(const multimd5_lanes *lanes) { (void)lanes; return 0; }
size_t multimd5_lanes_run(multimd5_lanes *lanes, const multimd5_input *inputs, size_t count, int finish, multimd5_output *out) {
    (void)lanes; (void)inputs; (void)count; (void)finish; (void)out;
    return 0;
}

#endif
