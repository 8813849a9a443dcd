package io.github.semyonsinchenko.safetensors.cli;

import java.io.Console;
import java.io.PrintWriter;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The command line's one progress reporter. On a terminal it redraws one bar in place; in a pipe or
 * a log, where carriage returns would pile every frame onto one line, it prints a plain line at
 * most every {@link #LINE_INTERVAL_NANOS} and one at the end; with {@code --no-progress}, nothing.
 */
final class Progress implements AutoCloseable {
    /** How progress is shown. */
    enum Mode {
        /** A bar redrawn in place (a terminal). */
        BAR,
        /** Plain periodic lines (a pipe or a log). */
        LINES,
        /** Nothing ({@code --no-progress}). */
        OFF;

        /** {@link #OFF} when asked, else {@link #BAR} on a terminal and {@link #LINES} otherwise. */
        static Mode of(boolean noProgress) {
            if (noProgress) {
                return OFF;
            }
            Console console = System.console();
            return console != null && console.isTerminal() ? BAR : LINES;
        }
    }

    static final long LINE_INTERVAL_NANOS = 5_000_000_000L;
    private static final long BAR_INTERVAL_NANOS = 100_000_000L;
    private static final int WIDTH = 30;

    private final PrintWriter out;
    private final Mode mode;
    private final String label;
    private final long total;
    private final LongFunction<String> unit;
    private long lastDraw;
    private boolean drawn;
    private boolean finished;
    private long done = -1;
    private String detail = "";
    private Thread poller;

    /**
     * @param label what is progressing, e.g. {@code "load"}
     * @param total the amount at which the work is done
     * @param unit how an amount prints, e.g. {@code Format::size} for bytes
     */
    Progress(PrintWriter out, Mode mode, String label, long total, LongFunction<String> unit) {
        this.out = out;
        this.mode = mode;
        this.label = label;
        this.total = total;
        this.unit = unit;
    }

    /**
     * Reports from {@code amount} and {@code details} every 200 ms on a thread of its own until
     * {@link #close()}, for work whose counters other threads update.
     */
    Progress polling(LongSupplier amount, Supplier<String> details) {
        if (mode != Mode.OFF) {
            poller = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    update(amount.getAsLong(), details.get());
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        break;
                    }
                }
                update(amount.getAsLong(), details.get());
            }, label + "-progress");
            poller.setDaemon(true);
            poller.start();
        }
        return this;
    }

    /** Reports {@code amount} of the total; draws when the mode's interval has passed, and at the end. */
    synchronized void update(long amount, String details) {
        done = amount;
        detail = details;
        if (mode == Mode.OFF || finished) {
            return;
        }
        long now = System.nanoTime();
        boolean last = amount >= total;
        if (!last && drawn && now - lastDraw < (mode == Mode.BAR ? BAR_INTERVAL_NANOS : LINE_INTERVAL_NANOS)) {
            return;
        }
        lastDraw = now;
        draw(last);
    }

    private void draw(boolean last) {
        drawn = true;
        finished = last;
        String counts = Format.fmt("%s/%s%s", unit.apply(done), unit.apply(total), detail.isEmpty() ? "" : "  " + detail);
        if (mode == Mode.BAR) {
            double frac = total <= 0 ? 1 : Math.min(1, (double) done / total);
            int filled = (int) Math.round(frac * WIDTH);
            out.print(Format.fmt("\r%s [%s%s] %5.1f%%  %s ", label, "#".repeat(filled), ".".repeat(WIDTH - filled),
                    frac * 100, counts));
            if (last) {
                out.println();
            }
        } else {
            out.println(label + " " + counts);
        }
        out.flush();
    }

    /** Stops the poller; work that ended early gets its last state drawn (and the bar's line ended). */
    @Override
    public void close() {
        if (poller != null) {
            poller.interrupt();
            try {
                poller.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            if (mode != Mode.OFF && done >= 0 && !finished) {
                draw(true);
            }
        }
    }
}
