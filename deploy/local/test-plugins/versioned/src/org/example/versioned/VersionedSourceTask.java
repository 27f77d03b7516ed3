package org.example.versioned;

import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/** With a "topic", writes one record every half second whose value names the task's version
 * ("task=1.0.0"), so what runs can be seen in the topic; without, writes nothing. */
public class VersionedSourceTask extends SourceTask {
    private String topic;
    private long sent;

    @Override
    public String version() {
        return PluginVersion.VERSION;
    }

    @Override
    public void start(Map<String, String> props) {
        topic = props.get("topic");
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        Thread.sleep(500);
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
