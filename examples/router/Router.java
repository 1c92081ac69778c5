import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.ringstore.Backend;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.live.PolicyFileWatcher;
import io.ringstore.live.RingRouter;
import io.ringstore.state.HostState;
import io.ringstore.state.SharedLoad;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;

/**
 * A reference router: an HTTP reverse proxy, the JDK only, that sends each request to the backend
 * ringstore chooses for its URI.
 *
 * <pre>
 * javac -cp ringstore.jar -d classes Router.java
 * java -cp ringstore.jar:classes Router RINGFILE PORT [c=1.25] [policy=FILE,DATACENTRE]
 * </pre>
 *
 * <ul>
 *   <li>The ring file is followed live ({@link RingRouter}): a republished file (by rename) serves
 *       the next request, and a rollout policy file, if given, is re-read within a second.</li>
 *   <li>Drain, health and requests in flight are shared with every router on the host through the
 *       state file beside the ring ({@link HostState}); {@code ringstore state RINGFILE drain ADDR}
 *       takes effect here on the next request.</li>
 *   <li>Each request goes to {@code route.chooseAndAcquire(uri, load)}: the ring's backend unless it is
 *       drained, failed, or already holds more than c × the mean in flight (bounded load, c = 1.25
 *       by default; 100 is in effect no bound), then the next candidate; chosen and counted in one step,
 *       so that requests racing for a backend's last place never take it above the bound.</li>
 *   <li>As nginx's {@code proxy_next_upstream error}: a backend that cannot be reached is reported
 *       failed (host-wide: after its {@code max_fails} every router skips it for {@code fail_timeout},
 *       nginx's defaults 1 and 10 s, since a ring file keeps neither)
 *       and the request is tried again, at most {@value #MAX_TRIES} times in all. An answer, whatever
 *       its status, is passed on and counts as a success.</li>
 *   <li>The response names the backend in {@code X-Backend} and the tries in {@code X-Tries}.</li>
 * </ul>
 *
 * An example, not a product: GET only, bodies buffered, no hop-by-hop header handling.
 */
public final class Router {
    private static final int MAX_TRIES = 3;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final RingRouter.Route route;
    private final SharedLoad load;
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT)
            .executor(Executors.newVirtualThreadPerTaskExecutor())
            .build();

    private Router(RingRouter.Route route, SharedLoad load) {
        this.route = route;
        this.load = load;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Router RINGFILE PORT [c=1.25] [policy=FILE,DATACENTRE]");
            System.exit(2);
        }
        Path ring = Path.of(args[0]);
        Map<String, String> options = new HashMap<>();
        for (String a : Arrays.asList(args).subList(2, args.length)) {
            options.put(a.substring(0, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
        }
        double c = Double.parseDouble(options.getOrDefault("c", Double.toString(BoundedLoad.DEFAULT_C)));
        String[] policy = options.containsKey("policy") ? options.get("policy").split(",", 2) : null;
        try (RingRouter router = RingRouter.builder(ring).pollMillis(50).open();
             PolicyFileWatcher rollout = policy == null ? null : PolicyFileWatcher.watch(Path.of(policy[0]), router, policy[1], 1000);
             HostState state = HostState.open(ring);
             RingRouter.Route route = router.route(Set.of())) {
            SharedLoad load = SharedLoad.open(state, router::current, BoundedLoad.of(c));
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[1])), 1024);
            server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
            server.createContext("/", new Router(route, load)::handle);
            server.start();
            System.out.println("LISTENING " + server.getAddress().getPort());
            System.out.flush();
            System.in.read(); // serves until stdin closes (or the process is killed)
            server.stop(0);
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String uri = exchange.getRequestURI().getRawPath();
            byte[] key = uri.getBytes(StandardCharsets.UTF_8);
            int tries = 0;
            while (tries < MAX_TRIES) {
                Backend backend = route.chooseAndAcquire(key, load); // counted in flight: reserve, then check the bound
                if (backend == null) {
                    break; // no backend can take it: every one drained or failed
                }
                HttpResponse<byte[]> response;
                tries++;
                int token = load.token(backend);
                try {
                    response = client.send(HttpRequest.newBuilder(URI.create("http://" + backend.address() + uri))
                            .timeout(REQUEST_TIMEOUT).build(), HttpResponse.BodyHandlers.ofByteArray());
                } catch (IOException unreachable) {
                    load.reportFailure(backend); // nginx's proxy_next_upstream error: try the next candidate
                    continue;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                } finally {
                    load.release(token);
                }
                load.reportSuccess(backend);
                respond(exchange, response.statusCode(), response.body(), backend.address(), tries);
                return;
            }
            respond(exchange, 502, "no backend answered\n".getBytes(StandardCharsets.US_ASCII), "-", tries);
        }
    }

    private static void respond(HttpExchange exchange, int status, byte[] body, String backend, int tries) throws IOException {
        exchange.getResponseHeaders().set("X-Backend", backend);
        exchange.getResponseHeaders().set("X-Tries", Integer.toString(tries));
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
