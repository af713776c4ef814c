/*
 * The broker-state agent of our Kafka image (tests/testenv/images/CONTRACT.md, section 3.6).
 * Written for strimzi-rs. It runs inside the Kafka JVM (java -javaagent:<jar>=<properties file>),
 * reads Kafka's BrokerState gauge and the log recovery gauges through the platform MBean server,
 * and serves
 *   - GET /v1/broker-state/ over HTTPS on port 8443, all interfaces, with a client certificate
 *     required (trusted: every *.crt key of Secret <cluster>-cluster-ca-cert; own certificate:
 *     keys <pod>.crt and <pod>.key of Secret <pod>), for our cluster operator;
 *   - GET /v1/ready/ over plain HTTP on localhost:8080 only, for kafka_readiness.sh.
 * The Secrets are read once from the Kubernetes API with the pod's service account token, in a
 * thread of its own, so the broker's start never waits for the agent.
 *
 * The properties file (written by kafka_run.sh) holds: node.name, namespace, ca.secret,
 * node.secret, api.url, api.token, api.ca; optional https.port (8443) and http.port (8080).
 */
package io.strimzi.rs.agent;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/** The agent: {@link #premain} is its entry point. */
public final class BrokerStateAgent {
    private static final String BROKER_STATE = "kafka.server:type=KafkaServer,name=BrokerState";
    private static final String REMAINING_LOGS = "kafka.log:type=LogManager,name=remainingLogsToRecover,*";
    private static final String REMAINING_SEGMENTS = "kafka.log:type=LogManager,name=remainingSegmentsToRecover,*";
    /** Kafka's BrokerState values (CONTRACT 3.6). */
    private static final int RUNNING = 3;
    private static final int RECOVERY = 2;
    private static final int UNKNOWN = 127;

    private BrokerStateAgent() {
    }

    /**
     * Entry point of the Java agent.
     *
     * @param arguments the path of the agent's properties file
     */
    public static void premain(String arguments) {
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(arguments == null ? "" : arguments))) {
            properties.load(in);
        } catch (IOException e) {
            log("cannot read the agent's properties file '" + arguments + "': " + e);
            return;
        }
        try {
            startReadiness(Integer.parseInt(properties.getProperty("http.port", "8080")));
        } catch (IOException e) {
            log("cannot serve /v1/ready/ on localhost: " + e);
        }
        Thread tls = new Thread(() -> startBrokerState(properties), "broker-state-agent");
        tls.setDaemon(true);
        tls.start();
    }

    private static void log(String message) {
        System.err.println("broker-state-agent: " + message);
    }

    /** The state gauge's value, or null before the broker registers it. */
    static Integer brokerState() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            Object value = server.getAttribute(new ObjectName(BROKER_STATE), "Value");
            return value instanceof Number ? ((Number) value).intValue() : null;
        } catch (Exception e) {
            return null;
        }
    }

    /** The sum of a gauge over all its tags (directories, threads). */
    static long sum(String pattern) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        long total = 0;
        try {
            Set<ObjectName> names = server.queryNames(new ObjectName(pattern), null);
            for (ObjectName name : names) {
                Object value = server.getAttribute(name, "Value");
                if (value instanceof Number) {
                    total += ((Number) value).longValue();
                }
            }
        } catch (Exception e) {
            log("reading " + pattern + ": " + e);
        }
        return total;
    }

    private static void answer(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        if (contentType != null) {
            exchange.getResponseHeaders().set("Content-Type", contentType);
        }
        if (status == 204) {
            exchange.sendResponseHeaders(status, -1);
        } else {
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
        exchange.close();
    }

    private static boolean isGet(HttpExchange exchange, String path) {
        String requested = exchange.getRequestURI().getPath();
        return "GET".equals(exchange.getRequestMethod()) && (requested.equals(path) || requested.equals(path + "/"));
    }

    /** GET /v1/ready/ on localhost: 204 from RUNNING on (except UNKNOWN), 503 before, 404 without the gauge. */
    private static void startReadiness(int port) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        server.createContext("/", exchange -> {
            if (!isGet(exchange, "/v1/ready")) {
                answer(exchange, 404, "text/plain", "Not found\n");
                return;
            }
            Integer state = brokerState();
            if (state == null) {
                answer(exchange, 404, "text/plain", "Broker state metric not found\n");
            } else if (state >= RUNNING && state != UNKNOWN) {
                answer(exchange, 204, null, "");
            } else {
                answer(exchange, 503, "text/plain", "Broker state is " + state + "\n");
            }
        });
        server.setExecutor(Executors.newSingleThreadExecutor(daemon("broker-state-agent-http")));
        server.start();
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Reads the Secrets (retrying until it can), then serves GET /v1/broker-state/ on 8443. */
    private static void startBrokerState(Properties properties) {
        for (int attempt = 1; ; attempt++) {
            try {
                SSLContext context = serverContext(properties);
                int port = Integer.parseInt(properties.getProperty("https.port", "8443"));
                HttpsServer server = HttpsServer.create(new InetSocketAddress(port), 0);
                server.setHttpsConfigurator(new HttpsConfigurator(context) {
                    @Override
                    public void configure(HttpsParameters parameters) {
                        SSLParameters ssl = context.getDefaultSSLParameters();
                        ssl.setNeedClientAuth(true);
                        parameters.setSSLParameters(ssl);
                    }
                });
                server.createContext("/", BrokerStateAgent::brokerStateAnswer);
                server.setExecutor(Executors.newSingleThreadExecutor(daemon("broker-state-agent-https")));
                server.start();
                log("serving the broker state on port " + port);
                return;
            } catch (Exception e) {
                log("attempt " + attempt + " to start the HTTPS server failed: " + e);
                try {
                    Thread.sleep(Math.min(30_000L, 2_000L * attempt));
                } catch (InterruptedException interrupted) {
                    return;
                }
            }
        }
    }

    private static void brokerStateAnswer(HttpExchange exchange) throws IOException {
        if (!isGet(exchange, "/v1/broker-state")) {
            answer(exchange, 404, "text/plain", "Not found\n");
            return;
        }
        Integer state = brokerState();
        if (state == null) {
            answer(exchange, 404, "text/plain", "Broker state metric not found\n");
            return;
        }
        StringBuilder json = new StringBuilder("{\"brokerState\":").append(state);
        if (state == RECOVERY) {
            json.append(",\"recoveryState\":{\"remainingLogsToRecover\":").append(sum(REMAINING_LOGS))
                .append(",\"remainingSegmentsToRecover\":").append(sum(REMAINING_SEGMENTS)).append('}');
        }
        json.append('}');
        answer(exchange, 200, "application/json", json.toString());
    }

    private static String required(Properties properties, String key) {
        String value = properties.getProperty(key, "").trim();
        if (value.isEmpty()) {
            throw new IllegalArgumentException("the agent's properties lack " + key);
        }
        return value;
    }

    /** The server's TLS context: our node certificate, trusting the cluster CA's certificates. */
    static SSLContext serverContext(Properties properties) throws Exception {
        String node = required(properties, "node.name");
        String caSecret = required(properties, "ca.secret");
        Map<String, byte[]> nodeData = readSecret(properties, required(properties, "node.secret"));
        Map<String, byte[]> caData = readSecret(properties, caSecret);

        byte[] chainPem = nodeData.get(node + ".crt");
        byte[] keyPem = nodeData.get(node + ".key");
        if (chainPem == null || keyPem == null) {
            throw new IllegalStateException("Secret " + properties.getProperty("node.secret") + " lacks " + node + ".crt or " + node + ".key");
        }
        List<Certificate> chain = certificates(chainPem);
        char[] password = randomPassword();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, password);
        keys.setKeyEntry("node", privateKey(keyPem), password, chain.toArray(new Certificate[0]));
        KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keyManagers.init(keys, password);

        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, password);
        int count = 0;
        for (Map.Entry<String, byte[]> entry : caData.entrySet()) {
            if (entry.getKey().endsWith(".crt")) {
                for (Certificate certificate : certificates(entry.getValue())) {
                    trusted.setCertificateEntry("ca-" + count++, certificate);
                }
            }
        }
        if (count == 0) {
            throw new IllegalStateException("Secret " + caSecret + " has no *.crt certificate to trust");
        }
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), new SecureRandom());
        return context;
    }

    private static char[] randomPassword() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return Base64.getEncoder().encodeToString(bytes).toCharArray();
    }

    static List<Certificate> certificates(byte[] pem) throws Exception {
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        return new ArrayList<>(factory.generateCertificates(new ByteArrayInputStream(pem)));
    }

    /** An unencrypted PKCS#8 private key (BEGIN PRIVATE KEY), RSA or EC. */
    static PrivateKey privateKey(byte[] pem) throws Exception {
        String text = new String(pem, StandardCharsets.US_ASCII);
        int begin = text.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = text.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            throw new IllegalArgumentException("the node key is not an unencrypted PKCS#8 PEM key");
        }
        String base64 = text.substring(begin + "-----BEGIN PRIVATE KEY-----".length(), end).replaceAll("\\s", "");
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64));
        try {
            return KeyFactory.getInstance("RSA").generatePrivate(spec);
        } catch (java.security.spec.InvalidKeySpecException notRsa) {
            return KeyFactory.getInstance("EC").generatePrivate(spec);
        }
    }

    /** A Secret's decoded data, read from the Kubernetes API with the service account token. */
    static Map<String, byte[]> readSecret(Properties properties, String name) throws Exception {
        String namespace = required(properties, "namespace");
        URL url = new URL(required(properties, "api.url") + "/api/v1/namespaces/" + namespace + "/secrets/" + name);
        String token = Files.readString(Path.of(required(properties, "api.token"))).trim();
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        int count = 0;
        for (Certificate certificate : certificates(Files.readAllBytes(Path.of(required(properties, "api.ca"))))) {
            trusted.setCertificateEntry("api-" + count++, certificate);
        }
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers.getTrustManagers(), new SecureRandom());

        HttpsURLConnection connection = (HttpsURLConnection) url.openConnection();
        connection.setSSLSocketFactory(context.getSocketFactory());
        connection.setRequestProperty("Authorization", "Bearer " + token);
        connection.setRequestProperty("Accept", "application/json");
        connection.setConnectTimeout(10_000);
        connection.setReadTimeout(10_000);
        int status = connection.getResponseCode();
        if (status != 200) {
            throw new IOException("GET " + url + " answered " + status);
        }
        String body;
        try (InputStream in = connection.getInputStream()) {
            body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Object data = ((Map<?, ?>) Json.parse(body)).get("data");
        Map<String, byte[]> decoded = new TreeMap<>();
        if (data instanceof Map) {
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) data).entrySet()) {
                decoded.put(String.valueOf(entry.getKey()), Base64.getDecoder().decode(String.valueOf(entry.getValue())));
            }
        }
        return decoded;
    }
}
