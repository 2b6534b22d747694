package dev.cce.neo4jlocal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

/**
 * Starts an embedded Neo4j Community DBMS with the Bolt connector on 127.0.0.1.
 *
 * <p>Usage: {@code Neo4jLocal [homeDir] [port] [pageCache]} (defaults: a fresh temp dir, 7687,
 * 256m; the page cache as Neo4j writes sizes: "512m", "2g").
 * Prints {@code neo4j-local ready bolt://127.0.0.1:PORT} once started, then blocks until killed.
 */
public final class Neo4jLocal {
    private Neo4jLocal() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        Path home = args.length > 0 && !args[0].isBlank()
                ? Path.of(args[0]).toAbsolutePath()
                : Files.createTempDirectory("neo4j-local-");
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 7687;
        long pageCache = ByteUnit.parse(args.length > 2 && !args[2].isBlank() ? args[2] : "256m");
        Files.createDirectories(home);

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                .build();

        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown, "neo4j-local-shutdown"));

        System.out.println("neo4j-local ready bolt://127.0.0.1:" + port);
        System.out.flush();

        new CountDownLatch(1).await();
    }
}
