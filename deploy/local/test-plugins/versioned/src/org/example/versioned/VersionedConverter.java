package org.example.versioned;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.components.Versioned;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.storage.Converter;

/** Values as UTF-8 strings with ";converter=<version>" appended; reports the version of its jar. */
public class VersionedConverter implements Converter, Versioned {
    @Override
    public String version() {
        return PluginVersion.VERSION;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
    }

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
        return value == null ? null : (value + ";converter=" + PluginVersion.VERSION).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
        return value == null ? SchemaAndValue.NULL
            : new SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, new String(value, StandardCharsets.UTF_8));
    }

    public ConfigDef config() {
        return new ConfigDef();
    }
}
