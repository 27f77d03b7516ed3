/*
 * Connect's OpenAPI description, generated from the connect-runtime jar as Kafka's own build does
 * (task connect:runtime:genConnectOpenAPIDocs in Kafka's build.gradle: swagger's gradle plugin, a
 * ResolveTask over the package org.apache.kafka.connect.runtime.rest.resources, sorted output, the
 * info block of gradle/openapi.template). Kafka publishes the description with its docs, not in the
 * jar, so deploy/openapi/build.py runs this against each Connect version's jars and keeps the JSON.
 *
 * Usage: java -cp <connect-runtime + swagger-jaxrs2 classpath> ConnectOpenApi <kafka-version> <out.json>
 */

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.swagger.v3.jaxrs2.integration.JaxrsOpenApiContextBuilder;
import io.swagger.v3.oas.integration.OpenApiContextLocator;
import io.swagger.v3.oas.integration.SwaggerConfiguration;
import io.swagger.v3.oas.integration.api.OpenApiContext;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.info.Contact;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.info.License;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

public final class ConnectOpenApi {
    private static final String RESOURCES = "org.apache.kafka.connect.runtime.rest.resources";

    private ConnectOpenApi() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ConnectOpenApi <kafka-version> <out.json>");
            System.exit(2);
        }
        String version = args[0];
        Path out = Path.of(args[1]);

        // The info block of Kafka's gradle/openapi.template, with the version expanded.
        OpenAPI template = new OpenAPI()
            .openapi("3.0.0")
            .info(new Info()
                .version(version)
                .title("Kafka Connect REST API")
                .description("This is the documentation of the [Apache Kafka](https://kafka.apache.org) Connect REST API.")
                .contact(new Contact().email("dev@kafka.apache.org"))
                .license(new License().name("Apache 2.0").url("https://www.apache.org/licenses/LICENSE-2.0.html")));

        SwaggerConfiguration config = new SwaggerConfiguration()
            .openAPI(template)
            .resourcePackages(Set.of(RESOURCES))
            .sortOutput(true)
            .prettyPrint(true)
            .readAllResources(true);
        OpenApiContext context = new JaxrsOpenApiContextBuilder<>()
            .ctxId("connect-" + version)
            .openApiConfiguration(config)
            .buildContext(true);
        OpenAPI api = context.read();
        if (api.getPaths() == null || api.getPaths().isEmpty()) {
            throw new IllegalStateException("no REST resources found in " + RESOURCES + " on the classpath");
        }

        ObjectMapper mapper = context.getOutputJsonMapper();
        mapper.configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
        String json = mapper.writerWithDefaultPrettyPrinter().writeValueAsString(api) + "\n";
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, json, StandardCharsets.UTF_8);
        System.out.println("wrote " + api.getPaths().size() + " paths to " + out);
    }
}
