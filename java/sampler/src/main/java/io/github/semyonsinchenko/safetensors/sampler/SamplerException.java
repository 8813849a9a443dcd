package io.github.semyonsinchenko.safetensors.sampler;

/** A sampler cannot deliver a batch: a producer failed, the split has no seeds here, or it was shut down. */
public class SamplerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * A failure without an underlying cause.
     *
     * @param message what cannot be delivered and why
     */
    public SamplerException(String message) {
        super(message);
    }

    /**
     * A failure caused by another, e.g. a producer's exception.
     *
     * @param message what cannot be delivered and why
     * @param cause the underlying failure
     */
    public SamplerException(String message, Throwable cause) {
        super(message, cause);
    }
}
