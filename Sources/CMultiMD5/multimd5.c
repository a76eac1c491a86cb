#include "multimd5.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define LANES 8

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
    multimd5_job *job;
    const uint8_t *next;
    size_t direct_left;
    size_t tail_left;
    size_t tail_total;
    uint8_t tail[128];
} lane;

static void lane_start(lane *l, multimd5_job *job, uint32_t state[4][LANES], int index) {
    l->job = job;
    l->next = job->data;
    l->direct_left = job->length / 64;
    size_t rest = job->length % 64;
    memset(l->tail, 0, sizeof l->tail);
    if (rest) memcpy(l->tail, job->data + job->length - rest, rest);
    l->tail[rest] = 0x80;
    l->tail_total = l->tail_left = rest < 56 ? 1 : 2;
    uint64_t bits = (uint64_t)job->length * 8;
    memcpy(l->tail + l->tail_total * 64 - 8, &bits, 8); /* little-endian, as MD5 wants */
    for (int w = 0; w < 4; w++) state[w][index] = IV[w];
}

static size_t lane_blocks_left(const lane *l) { return l->job ? l->direct_left + l->tail_left : 0; }

static const uint8_t *lane_block(lane *l) {
    if (l->direct_left) return l->next;
    return l->tail + 64 * (l->tail_total - l->tail_left);
}

static void lane_advance(lane *l) {
    if (l->direct_left) {
        l->direct_left--;
        l->next += 64;
    } else {
        l->tail_left--;
    }
}

#define ROTL(x, n) _mm256_or_si256(_mm256_slli_epi32((x), (n)), _mm256_srli_epi32((x), 32 - (n)))
#define F(b, c, d) _mm256_xor_si256(d, _mm256_and_si256(b, _mm256_xor_si256(c, d)))
#define G(b, c, d) _mm256_xor_si256(c, _mm256_and_si256(d, _mm256_xor_si256(b, c)))
#define H(b, c, d) _mm256_xor_si256(_mm256_xor_si256(b, c), d)
#define I(b, c, d) _mm256_xor_si256(c, _mm256_or_si256(b, _mm256_xor_si256(d, ones)))
/* One MD5 step for all lanes: a = b + rotl(a + f(b, c, d) + K[i] + m[g], s). */
#define STEP(f, a, b, c, d, i, g)                                                                     \
    a = _mm256_add_epi32(b, ROTL(_mm256_add_epi32(_mm256_add_epi32(a, f(b, c, d)),                   \
                                                  _mm256_add_epi32(_mm256_set1_epi32((int)K[i]), m[g])), \
                                 S[i]))
#define ROUND4(f, i, g0, g1, g2, g3)   \
    STEP(f, a, b, c, d, i, g0);        \
    STEP(f, d, a, b, c, i + 1, g1);    \
    STEP(f, c, d, a, b, i + 2, g2);    \
    STEP(f, b, c, d, a, i + 3, g3)

/* m[w] = word w (of eight, from byte offset `offset`) of every lane's block: an 8x8 transpose. */
__attribute__((target("avx2"))) static inline void load_transposed(__m256i m[8], const uint8_t *blocks[LANES], int offset) {
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

__attribute__((target("avx2"))) static void compress8(uint32_t state[4][LANES], const uint8_t *blocks[LANES]) {
    __m256i m[16];
    load_transposed(m, blocks, 0);
    load_transposed(m + 8, blocks, 32);
    const __m256i ones = _mm256_set1_epi32(-1);
    __m256i a = _mm256_loadu_si256((const __m256i *)state[0]);
    __m256i b = _mm256_loadu_si256((const __m256i *)state[1]);
    __m256i c = _mm256_loadu_si256((const __m256i *)state[2]);
    __m256i d = _mm256_loadu_si256((const __m256i *)state[3]);
    const __m256i a0 = a, b0 = b, c0 = c, d0 = d;
    ROUND4(F, 0, 0, 1, 2, 3);
    ROUND4(F, 4, 4, 5, 6, 7);
    ROUND4(F, 8, 8, 9, 10, 11);
    ROUND4(F, 12, 12, 13, 14, 15);
    ROUND4(G, 16, 1, 6, 11, 0);
    ROUND4(G, 20, 5, 10, 15, 4);
    ROUND4(G, 24, 9, 14, 3, 8);
    ROUND4(G, 28, 13, 2, 7, 12);
    ROUND4(H, 32, 5, 8, 11, 14);
    ROUND4(H, 36, 1, 4, 7, 10);
    ROUND4(H, 40, 13, 0, 3, 6);
    ROUND4(H, 44, 9, 12, 15, 2);
    ROUND4(I, 48, 0, 7, 14, 5);
    ROUND4(I, 52, 12, 3, 10, 1);
    ROUND4(I, 56, 8, 15, 6, 13);
    ROUND4(I, 60, 4, 11, 2, 9);
    _mm256_storeu_si256((__m256i *)state[0], _mm256_add_epi32(a, a0));
    _mm256_storeu_si256((__m256i *)state[1], _mm256_add_epi32(b, b0));
    _mm256_storeu_si256((__m256i *)state[2], _mm256_add_epi32(c, c0));
    _mm256_storeu_si256((__m256i *)state[3], _mm256_add_epi32(d, d0));
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

/* One lane on its own: the vector unit would run at an eighth of its width, slower than this. */
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

int multimd5_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
}

void multimd5_hash(multimd5_job *jobs, size_t count) {
    static const uint8_t idle_block[64];
    uint32_t state[4][LANES];
    lane lanes[LANES];
    memset(lanes, 0, sizeof lanes);
    size_t next_job = 0;
    for (;;) {
        /* Refill finished lanes, then run as many steps as the shortest message allows. */
        size_t steps = SIZE_MAX;
        int active = 0;
        for (int i = 0; i < LANES; i++) {
            if (!lanes[i].job && next_job < count) lane_start(&lanes[i], &jobs[next_job++], state, i);
            size_t left = lane_blocks_left(&lanes[i]);
            if (left) {
                active++;
                if (left < steps) steps = left;
            }
        }
        if (!active) return;
        if (active == 1 && next_job == count) {
            for (int i = 0; i < LANES; i++) {
                while (lane_blocks_left(&lanes[i])) {
                    compress1(state, i, lane_block(&lanes[i]));
                    lane_advance(&lanes[i]);
                }
            }
            steps = 0;
        }
        for (size_t step = 0; step < steps; step++) {
            const uint8_t *blocks[LANES];
            for (int i = 0; i < LANES; i++) {
                if (lanes[i].job) {
                    blocks[i] = lane_block(&lanes[i]);
                    lane_advance(&lanes[i]);
                } else {
                    blocks[i] = idle_block;
                }
            }
            compress8(state, blocks);
        }
        for (int i = 0; i < LANES; i++) {
            if (lanes[i].job && lane_blocks_left(&lanes[i]) == 0) {
                for (int w = 0; w < 4; w++) memcpy(lanes[i].job->digest + 4 * w, &state[w][i], 4);
                lanes[i].job = NULL;
            }
        }
    }
}

#else

int multimd5_available(void) { return 0; }
void multimd5_hash(multimd5_job *jobs, size_t count) { (void)jobs; (void)count; }

#endif
