/*
 * Our own broker-side metrics reporter for the Cruise Control stand-in (CONTRACT.md 5.5). The
 * class name is the one our operator writes into the brokers' metric.reporters; the code is
 * ours. It creates the metrics topic when asked to and publishes one JSON record per broker and
 * reporting interval. The stand-in itself does not read the topic (CONTRACT.md 5.7).
 */
package com.linkedin.kafka.cruisecontrol.metricsreporter;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.OperatingSystemMXBean;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes this broker's metrics to the Cruise Control metrics topic.
 *
 * <p>Configuration, from the broker's own configuration (placeholders already resolved by the
 * broker's configuration providers):
 * <ul>
 *   <li>{@code cruise.control.metrics.topic} (default {@code __CruiseControlMetrics});</li>
 *   <li>{@code cruise.control.metrics.topic.auto.create} (default false), with
 *       {@code cruise.control.metrics.topic.num.partitions}, {@code .replication.factor} and
 *       {@code .min.insync.replicas};</li>
 *   <li>{@code cruise.control.metrics.reporter.metrics.reporting.interval.ms} (default 60000);</li>
 *   <li>every other {@code cruise.control.metrics.reporter.<client config>}: the admin client's
 *       and producer's configuration (bootstrap servers, TLS).</li>
 * </ul>
 *
 * <p>Record: key the broker id as text; value
 * {@code {"brokerId": <int>, "time": <ms>, "metrics": {"<name>": <double>, ...}}} with the
 * process CPU load, heap use and the broker's byte rates it sees among its Kafka metrics.
 * Failures are logged to stderr and retried; the broker is never stopped by this reporter.
 */
public class CruiseControlMetricsReporter implements MetricsReporter, Runnable {
    /** The metrics topic's name. */
    public static final String TOPIC = "cruise.control.metrics.topic";
    /** Whether to create the topic. */
    public static final String AUTO_CREATE = "cruise.control.metrics.topic.auto.create";
    /** Prefix of the topic's creation settings. */
    public static final String TOPIC_PREFIX = "cruise.control.metrics.topic.";
    /** Prefix of the client configuration. */
    public static final String CLIENT_PREFIX = "cruise.control.metrics.reporter.";
    /** The reporting interval. */
    public static final String INTERVAL = CLIENT_PREFIX + "metrics.reporting.interval.ms";

    private static final long RETRY_MS = 5_000L;

    private final Map<MetricName, KafkaMetric> metrics = new ConcurrentHashMap<>();
    private volatile boolean running = true;
    private Map<String, Object> clientConfig = new HashMap<>();
    private String topic = "__CruiseControlMetrics";
    private boolean autoCreate;
    private int partitions = 1;
    private short replicationFactor = 1;
    private Optional<String> minInsyncReplicas = Optional.empty();
    private long intervalMs = 60_000L;
    private String brokerId = "-1";
    private Thread thread;

    @Override
    public void configure(Map<String, ?> configs) {
        for (Map.Entry<String, ?> entry : configs.entrySet()) {
            String key = entry.getKey();
            if (key.startsWith(CLIENT_PREFIX) && !key.equals(INTERVAL) && entry.getValue() != null) {
                clientConfig.put(key.substring(CLIENT_PREFIX.length()), entry.getValue());
            }
        }
        topic = text(configs, TOPIC).orElse(topic);
        autoCreate = text(configs, AUTO_CREATE).map(Boolean::parseBoolean).orElse(false);
        partitions = text(configs, TOPIC_PREFIX + "num.partitions").map(Integer::parseInt).orElse(1);
        replicationFactor = text(configs, TOPIC_PREFIX + "replication.factor").map(Short::parseShort).orElse((short) 1);
        minInsyncReplicas = text(configs, TOPIC_PREFIX + "min.insync.replicas");
        intervalMs = text(configs, INTERVAL).map(Long::parseLong).orElse(intervalMs);
        brokerId = text(configs, "node.id").or(() -> text(configs, "broker.id")).orElse(brokerId);
        clientConfig.put(ProducerConfig.CLIENT_ID_CONFIG, "cruise-control-metrics-reporter-" + brokerId);
    }

    private static Optional<String> text(Map<String, ?> configs, String key) {
        Object value = configs.get(key);
        return value == null || value.toString().trim().isEmpty()
            ? Optional.empty()
            : Optional.of(value.toString().trim());
    }

    @Override
    public void init(List<KafkaMetric> initial) {
        for (KafkaMetric metric : initial) {
            metrics.put(metric.metricName(), metric);
        }
        thread = new Thread(this, "cruise-control-metrics-reporter");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void metricChange(KafkaMetric metric) {
        metrics.put(metric.metricName(), metric);
    }

    @Override
    public void metricRemoval(KafkaMetric metric) {
        metrics.remove(metric.metricName());
    }

    @Override
    public void close() {
        running = false;
        if (thread != null) {
            thread.interrupt();
        }
    }

    @Override
    public void run() {
        while (running && autoCreate && !createTopic()) {
            if (!pause(RETRY_MS)) {
                return;
            }
        }
        Producer<String, String> producer = null;
        while (running) {
            try {
                if (producer == null) {
                    Map<String, Object> config = new HashMap<>(clientConfig);
                    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
                    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
                    producer = new KafkaProducer<>(config);
                }
                producer.send(new ProducerRecord<>(topic, brokerId, record(System.currentTimeMillis())));
            } catch (RuntimeException e) {
                System.err.println("CruiseControlMetricsReporter: publishing to " + topic + " failed: " + e);
                if (producer != null) {
                    producer.close();
                    producer = null;
                }
            }
            if (!pause(intervalMs)) {
                break;
            }
        }
        if (producer != null) {
            producer.close();
        }
    }

    private boolean pause(long ms) {
        try {
            Thread.sleep(ms);
            return running;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Creates the topic; true when it exists afterwards. */
    private boolean createTopic() {
        Properties properties = new Properties();
        properties.putAll(clientConfig);
        try (Admin admin = Admin.create(properties)) {
            NewTopic newTopic = new NewTopic(topic, partitions, replicationFactor);
            Map<String, String> topicConfigs = new HashMap<>();
            minInsyncReplicas.ifPresent(value -> topicConfigs.put("min.insync.replicas", value));
            newTopic.configs(topicConfigs);
            admin.createTopics(List.of(newTopic)).all().get();
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TopicExistsException) {
                return true;
            }
            System.err.println("CruiseControlMetricsReporter: creating " + topic + " failed: " + e.getCause());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (RuntimeException e) {
            System.err.println("CruiseControlMetricsReporter: creating " + topic + " failed: " + e);
            return false;
        }
    }

    /** The record of this broker at {@code now}. */
    String record(long now) {
        Map<String, Double> values = new TreeMap<>();
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            values.put("cpuProcessLoad", ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuLoad());
        }
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        values.put("heapUsedBytes", (double) memory.getHeapMemoryUsage().getUsed());
        for (KafkaMetric metric : metrics.values()) {
            MetricName name = metric.metricName();
            if (name.name().endsWith("byte-rate") || name.name().endsWith("bytes-consumed-rate")) {
                Object value = metric.metricValue();
                if (value instanceof Number) {
                    values.merge(name.group() + ":" + name.name(), ((Number) value).doubleValue(), Double::sum);
                }
            }
        }
        StringBuilder json = new StringBuilder();
        json.append("{\"brokerId\": ").append(brokerId).append(", \"time\": ").append(now).append(", \"metrics\": {");
        boolean first = true;
        for (Map.Entry<String, Double> entry : values.entrySet()) {
            double value = entry.getValue();
            if (Double.isNaN(value) || Double.isInfinite(value)) {
                continue;
            }
            if (!first) {
                json.append(", ");
            }
            first = false;
            json.append('"').append(entry.getKey().replace("\\", "\\\\").replace("\"", "\\\"")).append("\": ")
                .append(String.format(Locale.ROOT, "%s", value));
        }
        return json.append("}}").toString();
    }
}
