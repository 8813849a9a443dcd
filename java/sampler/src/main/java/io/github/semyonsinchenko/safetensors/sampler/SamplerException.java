package io.github.semyonsinchenko.safetensors.sampler;

/** A sampler cannot deliver a batch: a producer failed, the split has no seeds here, or it was shut down. */
public class SamplerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SamplerException(String message) {
        super(message);
    }

    public SamplerException(String message, Throwable cause) {
        super(message, cause);
    }
}
