package queryrunner

// The engines Query Runner serves register themselves with package engine when
// imported: package all imports every one (Postgres, Redshift, Mysql, Mssql, Trino,
// Snowflake, BigQuery).
import _ "github.com/meridian-catalog/meridian/queryrunner/engine/all"
