// SPDX-License-Identifier: MIT
package tenure.test;

import java.io.File;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Real tenured processes for the Java tests: each on a free loopback port
 * with its own data directory, ready once /readyz answers 200.  TN_BIN
 * names the build's bin/ folder, TN_SRC the source tree.
 */
public final class TestServer implements AutoCloseable {
    private static final Random PORTS = new Random(System.nanoTime() ^ ProcessHandle.current().pid());

    public final String url;
    public final int port;
    public final Path dir;
    private final Process proc;

    private TestServer(int port, Path dir, Process proc) {
        this.port = port;
        this.url = "http://127.0.0.1:" + port;
        this.dir = dir;
        this.proc = proc;
    }

    public static String src() {
        String s = System.getenv("TN_SRC");
        return s != null ? s : new File("..").getAbsolutePath();
    }

    public static String bin() {
        String b = System.getenv("TN_BIN");
        return b != null ? b : src() + "/build/dev/bin";
    }

    /** A loopback port nothing listens on now, below the ephemeral range. */
    public static int freePort() throws IOException {
        for (int k = 0; k < 200; k++) {
            int p = 12000 + PORTS.nextInt(19000);
            try (ServerSocket s = new ServerSocket(p, 1, java.net.InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException e) {
                // taken: try another
            }
        }
        throw new IOException("no free port");
    }

    public static TestServer start(String... args) throws Exception {
        Path dir = Files.createTempDirectory("tenure-java-");
        for (int tries = 0;; tries++) {
            int port = freePort();
            List<String> cmd = new ArrayList<>(List.of(bin() + "/tenured", "--listen", "127.0.0.1:" + port,
                    "--data-dir", dir.resolve("data").toString()));
            cmd.addAll(List.of(args));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("tenured.log").toFile()).start();
            TestServer s = new TestServer(port, dir, p);
            if (s.waitReady(20_000)) {
                return s;
            }
            s.close();
            if (tries >= 3) {
                throw new IllegalStateException("tenured did not become ready: "
                        + Files.readString(dir.resolve("tenured.log")));
            }
        }
    }

    boolean waitReady(long ms) throws InterruptedException {
        long end = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() - end < 0) {
            if (!proc.isAlive()) {
                return false;
            }
            try {
                HttpURLConnection c = (HttpURLConnection) new URL(url + "/readyz").openConnection();
                c.setConnectTimeout(1000);
                c.setReadTimeout(2000);
                if (c.getResponseCode() == 200) {
                    return true;
                }
            } catch (IOException e) {
                // not yet
            }
            Thread.sleep(50);
        }
        return false;
    }

    public long pid() {
        return proc.pid();
    }

    @Override
    public void close() {
        proc.destroyForcibly();
        try {
            proc.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
