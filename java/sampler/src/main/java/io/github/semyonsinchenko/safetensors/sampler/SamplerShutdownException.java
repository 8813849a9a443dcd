package io.github.semyonsinchenko.safetensors.sampler;

/** The sampler was shut down: no more batches will come. */
public final class SamplerShutdownException extends SamplerException {
    private static final long serialVersionUID = 1L;

    /**
     * A shutdown seen by a consumer.
     *
     * @param message which batches will not come
     */
    public SamplerShutdownException(String message) {
        super(message);
    }
}
