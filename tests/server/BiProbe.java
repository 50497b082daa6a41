// What a JDBC BI tool (DBeaver, Metabase) sends dpsql serve: run by tests/server/test_bi_jdbc.py
// as java -cp postgresql.jar BiProbe.java URL USER PASSWORD (Java 11+ source-file mode).
// Each line is "<name> ok <rows>" or "<name> error <SQLSTATE> <message>".
import java.math.BigDecimal;
import java.sql.*;
import java.time.*;
import java.util.Properties;

public class BiProbe {
    interface Setter { void set(PreparedStatement ps) throws SQLException; }
    interface Call { ResultSet open(DatabaseMetaData meta) throws SQLException; }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.setProperty("user", args[1]);
        props.setProperty("password", args[2]);
        try (Connection con = DriverManager.getConnection(args[0], props)) {
            setters(con);
            metadata(con.getMetaData());
        }
    }

    static void setters(Connection con) throws SQLException {
        // One ε for every question, so that one asked twice is answered once, from the cache
        // (without it each would spend a tenth of what is left: a new question each time).
        try (Statement st = con.createStatement()) {
            st.execute("SET dpsql.epsilon = 1");
        }
        String count = "SELECT COUNT(*) AS n FROM visits WHERE ";
        param(con, "setDate", count + "visit_date >= ?",
              ps -> ps.setDate(1, Date.valueOf("2024-03-01")));
        param(con, "setTimestamp", count + "visit_time < ?",
              ps -> ps.setTimestamp(1, Timestamp.valueOf("2024-03-01 00:00:00")));
        param(con, "setObject(LocalDate)", count + "visit_date >= ?",
              ps -> ps.setObject(1, LocalDate.of(2024, 3, 1)));
        param(con, "setObject(LocalDateTime)", count + "visit_time < ?",
              ps -> ps.setObject(1, LocalDateTime.of(2024, 3, 1, 12, 30)));
        param(con, "setObject(OffsetDateTime)", count + "visit_time < ?",
              ps -> ps.setObject(1, OffsetDateTime.of(2024, 3, 1, 12, 30, 0, 0, ZoneOffset.UTC)));
        param(con, "setBigDecimal", count + "cost > ?",
              ps -> ps.setBigDecimal(1, new BigDecimal("100.25")));
        param(con, "setLong", count + "patient_id > ?", ps -> ps.setLong(1, 10L));
        param(con, "setInt", count + "age > ?", ps -> ps.setInt(1, 40));
        param(con, "setDouble", count + "cost > ?", ps -> ps.setDouble(1, 100.5));
        param(con, "setString", count + "specialty = ?",
              ps -> ps.setString(1, "general practice"));
        param(con, "setBoolean", count + "insured = ?", ps -> ps.setBoolean(1, true));
        param(con, "setNull", count + "visit_date >= ?", ps -> ps.setNull(1, Types.DATE));
        param(con, "bad text date", count + "visit_date >= ?",
              ps -> ps.setString(1, "2024-02-30"));
        param(con, "bad cast date", count + "visit_date >= CAST(? AS DATE)",
              ps -> ps.setString(1, "March"));
        param(con, "bad number", count + "age > CAST(? AS SMALLINT)",
              ps -> ps.setString(1, "70000"));
    }

    static void param(Connection con, String name, String sql, Setter setter) {
        try (PreparedStatement ps = con.prepareStatement(sql)) {
            setter.set(ps);
            try (ResultSet rs = ps.executeQuery()) {
                print(name, rs);
            }
        } catch (SQLException e) {
            failed(name, e);
        }
    }

    static void metadata(DatabaseMetaData meta) {
        call(meta, "getTables", m -> m.getTables(null, null, "%", new String[]{"TABLE", "VIEW"}));
        call(meta, "getColumns", m -> m.getColumns(null, "public", "visits", "%"));
        call(meta, "getPrimaryKeys", m -> m.getPrimaryKeys(null, "public", "visits"));
        call(meta, "getImportedKeys", m -> m.getImportedKeys(null, "public", "visits"));
        call(meta, "getExportedKeys", m -> m.getExportedKeys(null, "public", "visits"));
        call(meta, "getIndexInfo", m -> m.getIndexInfo(null, "public", "visits", false, true));
        call(meta, "getTypeInfo", DatabaseMetaData::getTypeInfo);
        call(meta, "getSchemas", DatabaseMetaData::getSchemas);
        call(meta, "getCatalogs", DatabaseMetaData::getCatalogs);
        call(meta, "getTableTypes", DatabaseMetaData::getTableTypes);
        call(meta, "getFunctions", m -> m.getFunctions(null, "public", "%"));
        call(meta, "getProcedures", m -> m.getProcedures(null, "public", "%"));
    }

    static void call(DatabaseMetaData meta, String name, Call call) {
        try (ResultSet rs = call.open(meta)) {
            print(name, rs);
        } catch (SQLException e) {
            failed(name, e);
        }
    }

    static void print(String name, ResultSet rs) throws SQLException {
        int rows = 0;
        StringBuilder first = new StringBuilder();
        while (rs.next()) {
            if (rows++ == 0) {
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    first.append(i > 1 ? "|" : "").append(rs.getString(i));
                }
            }
        }
        System.out.println(name + " ok " + rows + " " + first);
    }

    static void failed(String name, SQLException e) {
        System.out.println(name + " error " + e.getSQLState() + " "
                           + String.valueOf(e.getMessage()).replace('\n', ' '));
    }
}
