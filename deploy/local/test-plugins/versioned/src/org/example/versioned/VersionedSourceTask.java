package org.example.versioned;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/** With a "topic", writes one record every half second whose value names the task's version
 * ("task=1.0.0"), so what runs can be seen in the topic; without, writes nothing. With "fail.until.file",
 * the task fails (FAILED, its trace naming the file) until that file exists: a connector that really fails
 * and recovers once restarted after the file appears. */
public class VersionedSourceTask extends SourceTask {
    private String topic;
    private String failUntil;
    private long sent;

    @Override
    public String version() {
        return PluginVersion.VERSION;
    }

    @Override
    public void start(Map<String, String> props) {
        topic = props.get("topic");
        failUntil = props.get("fail.until.file");
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        Thread.sleep(500);
        if (failUntil != null && !Files.exists(Paths.get(failUntil))) {
            throw new ConnectException("failing until " + failUntil + " exists");
        }
        if (topic == null || topic.isEmpty()) {
            return null;
        }
        sent++;
        return Collections.singletonList(new SourceRecord(
            Collections.singletonMap("task", "0"), Collections.singletonMap("sent", sent),
            topic, null, null, null, Schema.STRING_SCHEMA, "task=" + PluginVersion.VERSION));
    }

    @Override
    public void stop() {
    }
}
