package io.github.semyonsinchenko.safetensors.mmap;

import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import io.github.semyonsinchenko.safetensors.format.Violation;
import java.io.UncheckedIOException;

/**
 * A read or write of a memory-mapped file faulted, almost always because another process truncated
 * the file while it was mapped. Thrown instead of a JVM crash (native kernels) or the JDK's
 * {@link InternalError} (Java reads) by {@code Tensor} accessors and the {@code Kernels} calls. It is
 * unchecked because it comes from calls that take plain memory segments; the cause is a
 * {@link SafetensorsException} with {@link Violation#FILE_CHANGED_WHILE_MAPPED} naming the file and
 * the tensor when they are known.
 */
public final class MappedFileFaultException extends UncheckedIOException {
    private static final long serialVersionUID = 1L;

    /**
     * Wraps the checked description of the fault; the message is the cause's.
     *
     * @param cause names the file, the tensor and the bytes lost, with
     *     {@link Violation#FILE_CHANGED_WHILE_MAPPED}
     */
    public MappedFileFaultException(SafetensorsException cause) {
        super(cause.getMessage(), cause);
    }

    @Override
    public synchronized SafetensorsException getCause() {
        return (SafetensorsException) super.getCause();
    }

    /** {@return the rule broken: always {@link Violation#FILE_CHANGED_WHILE_MAPPED}} */
    public Violation violation() {
        return getCause().violation();
    }

    /** {@return the file, or a description of the memory when it belongs to no registered file} */
    public String source() {
        return getCause().source();
    }

    /** {@return the tensor whose bytes faulted, or null when unknown} */
    public String tensor() {
        return getCause().tensor();
    }
}
