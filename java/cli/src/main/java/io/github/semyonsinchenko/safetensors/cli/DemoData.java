package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The demo's tensors and their deterministic contents. Each tensor's bytes are an xorshift64
 * stream written 8 bytes at a time into an off-heap buffer, with a per-dtype bit mask so that
 * every element is a sensible value (floats in ±[0.5, 1), token ids below 65,536, booleans 0 or 1)
 * at the cost of one AND and one OR per 8 bytes. The stream does not depend on how it is chunked
 * (as long as chunks are multiples of 8 bytes), so it can be regenerated to check the file.
 */
final class DemoData {
    /** The off-heap buffer the demo generates into and compares through, in bytes. */
    static final int BUFFER_BYTES = 4 << 20;

    /**
     * One planned tensor. {@code mask} and {@code bits} shape every 8 random bytes:
     * {@code (random & mask) | bits}, applied to all lanes of the little-endian long at once.
     */
    record Planned(String name, Dtype dtype, long[] shape, long bytes, long seed, long mask, long bits) {}

    private DemoData() {}

    /** The tensor set for about {@code targetBytes} of data: mixed dtypes, a scalar and an empty tensor. */
    static List<Planned> plan(long targetBytes, long seed) {
        List<Planned> plan = new ArrayList<>();
        // name, dtype, trailing dims (the first dim is sized to the fraction), fraction of the target, mask, bits
        matrix(plan, seed, "model.embed_tokens.weight", Dtype.BF16, new long[] {1024}, 0.30, targetBytes,
                0x807F_807F_807F_807FL, 0x3F00_3F00_3F00_3F00L);
        matrix(plan, seed, "model.layers.0.self_attn.qkv_proj.weight", Dtype.F16, new long[] {768}, 0.20, targetBytes,
                0x83FF_83FF_83FF_83FFL, 0x3800_3800_3800_3800L);
        matrix(plan, seed, "model.layers.0.mlp.up_proj.weight", Dtype.F32, new long[] {1024}, 0.22, targetBytes,
                0x807F_FFFF_807F_FFFFL, 0x3F00_0000_3F00_0000L);
        fixed(plan, seed, "model.layers.0.mlp.up_proj.bias", Dtype.F32, new long[] {1024},
                0x807F_FFFF_807F_FFFFL, 0x3F00_0000_3F00_0000L);
        matrix(plan, seed, "model.norm.running_var", Dtype.F64, new long[] {256}, 0.05, targetBytes,
                0x800F_FFFF_FFFF_FFFFL, 0x3FE0_0000_0000_0000L);
        matrix(plan, seed, "batch.input_ids", Dtype.I64, new long[] {512}, 0.06, targetBytes,
                0xFFFFL, 0L);
        matrix(plan, seed, "batch.position_ids", Dtype.I32, new long[] {512}, 0.05, targetBytes,
                0x0000_0FFF_0000_0FFFL, 0L);
        matrix(plan, seed, "batch.pixel_values", Dtype.U8, new long[] {3, 32, 32}, 0.08, targetBytes,
                -1L, 0L);
        matrix(plan, seed, "batch.attention_mask", Dtype.BOOL, new long[] {512}, 0.04, targetBytes,
                0x0101_0101_0101_0101L, 0L);
        fixed(plan, seed, "trainer.global_step", Dtype.I64, new long[] {}, 0xF_FFFFL, 0L);
        fixed(plan, seed, "optimizer.unused_state", Dtype.F32, new long[] {0, 1024}, 0L, 0L);
        return plan;
    }

    private static void matrix(List<Planned> plan, long seed, String name, Dtype dtype, long[] trailing,
                               double fraction, long targetBytes, long mask, long bits) {
        long rowBytes = dtype.byteSize();
        for (long d : trailing) {
            rowBytes *= d;
        }
        long rows = Math.max(1, (long) (targetBytes * fraction) / rowBytes);
        long[] shape = new long[trailing.length + 1];
        shape[0] = rows;
        System.arraycopy(trailing, 0, shape, 1, trailing.length);
        add(plan, seed, name, dtype, shape, mask, bits);
    }

    private static void fixed(List<Planned> plan, long seed, String name, Dtype dtype, long[] shape, long mask,
                              long bits) {
        add(plan, seed, name, dtype, shape, mask, bits);
    }

    private static void add(List<Planned> plan, long seed, String name, Dtype dtype, long[] shape, long mask,
                            long bits) {
        long count = 1;
        for (long d : shape) {
            count = Math.multiplyExact(count, d);
        }
        long tensorSeed = splitmix64(seed ^ (0x9E37_79B9_7F4A_7C15L * (plan.size() + 1)));
        plan.add(new Planned(name, dtype, shape, dtype.storageBytes(count), tensorSeed == 0 ? 1 : tensorSeed,
                mask, bits));
    }

    static long splitmix64(long z) {
        z += 0x9E37_79B9_7F4A_7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }

    /** A tensor's byte stream, produced chunk by chunk. */
    static final class Stream {
        private final Planned p;
        private long state;
        private long produced;

        Stream(Planned p) {
            this.p = p;
            this.state = p.seed();
        }

        long remaining() {
            return p.bytes() - produced;
        }

        /**
         * Fills {@code buf[0, n)} with the next {@code n} bytes, n = min(remaining, buf size); buf's
         * size must be a multiple of 8. Returns n.
         */
        long next(MemorySegment buf) {
            long n = Math.min(remaining(), buf.byteSize());
            long x = state;
            long mask = p.mask();
            long bits = p.bits();
            long whole = n & ~7L;
            for (long off = 0; off < whole; off += 8) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                buf.set(LittleEndian.I64, off, (x & mask) | bits);
            }
            if (whole < n) { // only at the very end of a tensor
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                long v = (x & mask) | bits;
                for (long off = whole; off < n; off++, v >>>= 8) {
                    buf.set(ValueLayout.JAVA_BYTE, off, (byte) v);
                }
            }
            state = x;
            produced += n;
            return n;
        }
    }
}
