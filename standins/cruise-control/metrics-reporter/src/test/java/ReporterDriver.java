/*
 * Runs our metrics reporter outside a broker, as a broker would (configure, init, close),
 * against the broker at args[0], then reads the metrics topic and prints its first record's
 * value. Used by the crate's tests/metrics_reporter.rs (launched as a single source file).
 */
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import com.linkedin.kafka.cruisecontrol.metricsreporter.CruiseControlMetricsReporter;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

public class ReporterDriver {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        Map<String, Object> config = new HashMap<>();
        config.put("node.id", "7");
        config.put("cruise.control.metrics.topic", topic);
        config.put("cruise.control.metrics.topic.auto.create", "true");
        config.put("cruise.control.metrics.topic.num.partitions", "2");
        config.put("cruise.control.metrics.topic.replication.factor", "1");
        config.put("cruise.control.metrics.topic.min.insync.replicas", "1");
        config.put("cruise.control.metrics.reporter.bootstrap.servers", bootstrap);
        config.put("cruise.control.metrics.reporter.metrics.reporting.interval.ms", "500");
        CruiseControlMetricsReporter reporter = new CruiseControlMetricsReporter();
        reporter.configure(config);
        reporter.init(List.of());
        Properties consumer = new Properties();
        consumer.put("bootstrap.servers", bootstrap);
        consumer.put("group.id", "reporter-driver");
        consumer.put("auto.offset.reset", "earliest");
        consumer.put("key.deserializer", StringDeserializer.class.getName());
        consumer.put("value.deserializer", StringDeserializer.class.getName());
        long deadline = System.currentTimeMillis() + 60_000L;
        try (KafkaConsumer<String, String> records = new KafkaConsumer<>(consumer)) {
            records.subscribe(List.of(topic));
            while (System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : records.poll(Duration.ofMillis(500))) {
                    System.out.println("KEY " + record.key());
                    System.out.println("VALUE " + record.value());
                    reporter.close();
                    return;
                }
            }
        }
        reporter.close();
        System.err.println("no record on " + topic);
        System.exit(1);
    }
}
