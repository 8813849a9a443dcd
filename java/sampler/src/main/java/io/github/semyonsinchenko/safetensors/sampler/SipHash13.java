package io.github.semyonsinchenko.safetensors.sampler;

/**
 * SipHash-1-3 with both keys zero: what Rust's {@code DefaultHasher::new()} computes (spec §7).
 * Pinned here because Rust does not promise that algorithm; the Appendix A vectors guard it.
 */
public final class SipHash13 {
    private SipHash13() {}

    private static final long V0 = 0x736f6d6570736575L;
    private static final long V1 = 0x646f72616e646f6dL;
    private static final long V2 = 0x6c7967656e657261L;
    private static final long V3 = 0x7465646279746573L;

    /**
     * The hash of {@code LE32(task) || LE32(anchorRow) || LE64(splitSeed)}, as the split assignment
     * feeds it.
     *
     * @param task the task's index
     * @param anchorRow the seed's anchor row
     * @param splitSeed the split seed
     * @return the 64-bit hash
     */
    public static long hashSplitKey(int task, int anchorRow, long splitSeed) {
        long m0 = Integer.toUnsignedLong(task) | (Integer.toUnsignedLong(anchorRow) << 32);
        State s = new State();
        s.absorb(m0);
        s.absorb(splitSeed);
        return s.finish(16, 0);
    }

    /**
     * The hash of any byte string.
     *
     * @param message the bytes hashed
     * @return the 64-bit hash
     */
    public static long hash(byte[] message) {
        State s = new State();
        int words = message.length / 8;
        for (int w = 0; w < words; w++) {
            long m = 0;
            for (int b = 7; b >= 0; b--) {
                m = (m << 8) | (message[w * 8 + b] & 0xff);
            }
            s.absorb(m);
        }
        long tail = 0;
        for (int b = message.length - 1; b >= words * 8; b--) {
            tail = (tail << 8) | (message[b] & 0xff);
        }
        return s.finish(message.length, tail);
    }

    private static final class State {
        long v0 = V0;
        long v1 = V1;
        long v2 = V2;
        long v3 = V3;

        void absorb(long m) {
            v3 ^= m;
            round();
            v0 ^= m;
        }

        long finish(int length, long tail) {
            absorb(((long) (length & 0xff) << 56) | tail);
            v2 ^= 0xff;
            round();
            round();
            round();
            return v0 ^ v1 ^ v2 ^ v3;
        }

        private void round() {
            v0 += v1;
            v1 = Long.rotateLeft(v1, 13) ^ v0;
            v0 = Long.rotateLeft(v0, 32);
            v2 += v3;
            v3 = Long.rotateLeft(v3, 16) ^ v2;
            v0 += v3;
            v3 = Long.rotateLeft(v3, 21) ^ v0;
            v2 += v1;
            v1 = Long.rotateLeft(v1, 17) ^ v2;
            v2 = Long.rotateLeft(v2, 32);
        }
    }
}
