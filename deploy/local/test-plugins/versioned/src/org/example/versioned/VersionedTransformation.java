package org.example.versioned;

import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.components.Versioned;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.transforms.Transformation;

/** Appends ";transform=<version>" to a string value; reports the version of its jar. */
public class VersionedTransformation<R extends ConnectRecord<R>> implements Transformation<R>, Versioned {
    @Override
    public String version() {
        return PluginVersion.VERSION;
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }

    @Override
    public R apply(R record) {
        if (!(record.value() instanceof String)) {
            return record;
        }
        return record.newRecord(record.topic(), record.kafkaPartition(), record.keySchema(), record.key(),
            record.valueSchema(), record.value() + ";transform=" + PluginVersion.VERSION, record.timestamp());
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef();
    }

    @Override
    public void close() {
    }
}
