package io.github.semyonsinchenko.safetensors.sampler;

/**
 * xoshiro256++ seeded by SplitMix64, drawing exactly as the reference's {@code SmallRng} (rand
 * 0.10 on 64-bit hosts) does for the calls the sampler makes (spec §8): {@link #nextLong()},
 * {@link #below(long)} for ranges under 2^32, and {@link #shuffle(int[], int, int)}. Mutable and
 * reseedable, so hot paths allocate nothing. Not thread-safe.
 */
public final class SmallRng {
    private long s0;
    private long s1;
    private long s2;
    private long s3;

    /**
     * A generator in the state {@code seed_from_u64(seed)} gives.
     *
     * @param seed the seed
     */
    public SmallRng(long seed) {
        seed(seed);
    }

    /**
     * Resets the state as {@code seed_from_u64(seed)} does (SplitMix64).
     *
     * @param seed the seed
     */
    public void seed(long seed) {
        long x = seed;
        x += 0x9e3779b97f4a7c15L;
        s0 = mix(x);
        x += 0x9e3779b97f4a7c15L;
        s1 = mix(x);
        x += 0x9e3779b97f4a7c15L;
        s2 = mix(x);
        x += 0x9e3779b97f4a7c15L;
        s3 = mix(x);
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * The next 64 random bits.
     *
     * @return any long, uniformly
     */
    public long nextLong() {
        long result = Long.rotateLeft(s0 + s3, 23) + s0;
        long t = s1 << 17;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = Long.rotateLeft(s3, 45);
        return result;
    }

    /**
     * The upper 32 bits of {@link #nextLong()}, as an unsigned value.
     *
     * @return a value in {@code [0, 2^32)}
     */
    public long nextInt() {
        return nextLong() >>> 32;
    }

    /**
     * A uniform value in {@code [0, n)} for {@code 1 <= n < 2^32}: the widening multiply with one
     * optional correction word that the reference uses (one or two words drawn).
     *
     * @param n the bound, in {@code [1, 2^32)}
     * @return a value in {@code [0, n)}
     */
    public long below(long n) {
        long m = nextInt() * n;
        long hi = m >>> 32;
        long lo = m & 0xFFFF_FFFFL;
        if (lo > (1L << 32) - n) {
            long hi2 = (nextInt() * n) >>> 32;
            if (lo + hi2 >= (1L << 32)) {
                hi += 1;
            }
        }
        return hi;
    }

    /**
     * Shuffles {@code a[from, from + length)} in place exactly as the reference's slice shuffle:
     * a forward Fisher-Yates whose swap indices come several at a time from one draw below a
     * product of consecutive integers. Draws nothing when {@code length <= 1}.
     *
     * @param a the array
     * @param from the first index shuffled
     * @param length the number of elements shuffled, below 2^32
     */
    public void shuffle(int[] a, int from, int length) {
        if (length <= 1) {
            return;
        }
        long n = 0;
        long chunk = 0;
        int remaining = 1;
        for (int i = 0; i < length; i++) {
            long k = n + 1;
            int next;
            if (remaining == 0) {
                // bound = k (k+1) ... (k+c-1): the largest such product that fits in u32
                long bound = k;
                long factor = k + 1;
                while (bound * factor <= 0xFFFF_FFFFL) {
                    bound *= factor;
                    factor++;
                }
                int count = (int) (factor - k);
                chunk = below(bound);
                next = count - 1;
            } else {
                next = remaining - 1;
            }
            long j;
            if (next == 0) {
                j = chunk;
            } else {
                j = chunk % k;
                chunk /= k;
            }
            remaining = next;
            n = k;
            int tmp = a[from + i];
            a[from + i] = a[from + (int) j];
            a[from + (int) j] = tmp;
        }
    }
}
