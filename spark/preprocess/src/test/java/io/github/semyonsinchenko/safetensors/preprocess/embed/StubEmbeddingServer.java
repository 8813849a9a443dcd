package io.github.semyonsinchenko.safetensors.preprocess.embed;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback embedding endpoint that answers like the stand-in headwater's fixture was made with:
 * per string, FNV-1a-64 of its UTF-8 bytes seeds 1,024 SplitMix64 steps, each step {@code z}
 * giving {@code (float) ((z >>> 40) / 2^23 - 1)}. It can fail its first requests on purpose.
 */
public final class StubEmbeddingServer implements AutoCloseable {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger failuresLeft;
    private volatile String lastAuthorization;

    public StubEmbeddingServer(int failFirst) throws IOException {
        failuresLeft = new AtomicInteger(failFirst);
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/embed", this::handle);
        server.start();
    }

    public URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/embed");
    }

    public int requests() {
        return requests.get();
    }

    public String lastAuthorization() {
        return lastAuthorization;
    }

    public static float[] vector(String s) {
        long x = HashedEmbedder.fnv1a64(s.getBytes(StandardCharsets.UTF_8));
        float[] v = new float[HttpEmbedder.MODEL_DIM];
        for (int i = 0; i < v.length; i++) {
            x += 0x9e3779b97f4a7c15L;
            long z = x;
            z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
            z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
            z ^= z >>> 31;
            v[i] = (float) ((z >>> 40) / 8388608.0 - 1.0);
        }
        return v;
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            requests.incrementAndGet();
            lastAuthorization = ex.getRequestHeaders().getFirst("Authorization");
            if (failuresLeft.getAndDecrement() > 0) {
                send(ex, 503, "{\"error\": \"try again\"}");
                return;
            }
            JsonNode input = MAPPER.readTree(ex.getRequestBody()).get("input");
            StringBuilder out = new StringBuilder("{\"data\": [");
            for (int i = 0; i < input.size(); i++) {
                out.append(i == 0 ? "" : ", ").append("{\"embedding\": [");
                float[] v = vector(input.get(i).textValue());
                for (int k = 0; k < v.length; k++) {
                    // Exact decimal of the float, so the client parses back the same bits.
                    out.append(k == 0 ? "" : ",").append(new BigDecimal(v[k]).toString());
                }
                out.append("]}");
            }
            send(ex, 200, out.append("]}").toString());
        }
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream o = ex.getResponseBody()) {
            o.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
