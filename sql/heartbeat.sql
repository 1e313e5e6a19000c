-- mssql-cdc heartbeat for a quiet database (docs/heartbeat.md).
--
-- SQL Server's capture process moves the max LSN only when a tracked table commits or, on a
-- quiet database, with an idle entry about every 305 s (SQL Server 2022). A reader can end a
-- batch only at the max LSN, so a quiet database's verdict (finalized_until) lags up to about
-- five minutes behind real time. This script makes a one-row table tracked by CDC and a SQL
-- Server Agent job that updates it every 10 seconds (Agent's shortest interval), so the max
-- LSN, and with it the verdict, is at most about 10 s behind.
--
-- A DBA runs it once, in the database whose changes are read, as a member of sysadmin (it
-- enables CDC on a table and adds an Agent job in msdb). mssql-cdc itself never writes to the
-- source. Running it again changes nothing. The change table grows by 8,640 rows a day, which
-- CDC's own cleanup removes with the rest. Its capture instance, dbo_cdc_heartbeat, is not a
-- table to stream: leave it out of a pipeline's tables (all_tables leaves it out itself).
--
-- To remove it, in the same database:
--   DECLARE @job sysname = N'cdc_heartbeat_' + DB_NAME();
--   EXEC msdb.dbo.sp_delete_job @job_name = @job;
--   EXEC sys.sp_cdc_disable_table @source_schema = N'dbo', @source_name = N'cdc_heartbeat',
--        @capture_instance = N'dbo_cdc_heartbeat';
--   DROP TABLE dbo.cdc_heartbeat;

SET NOCOUNT ON;
SET XACT_ABORT ON;

IF (SELECT is_cdc_enabled FROM sys.databases WHERE database_id = DB_ID()) = 0
BEGIN
    RAISERROR (N'CDC is not enabled on this database: run EXEC sys.sp_cdc_enable_db first.', 16, 1);
    RETURN;
END;

IF OBJECT_ID(N'dbo.cdc_heartbeat', N'U') IS NULL
BEGIN
    CREATE TABLE dbo.cdc_heartbeat (
        id tinyint NOT NULL CONSTRAINT pk_cdc_heartbeat PRIMARY KEY CONSTRAINT ck_cdc_heartbeat_one_row CHECK (id = 1),
        beat_at datetime2(3) NOT NULL
    );
    INSERT INTO dbo.cdc_heartbeat (id, beat_at) VALUES (1, SYSUTCDATETIME());
END;

IF NOT EXISTS (SELECT 1 FROM cdc.change_tables WHERE capture_instance = N'dbo_cdc_heartbeat')
BEGIN
    EXEC sys.sp_cdc_enable_table
        @source_schema = N'dbo',
        @source_name = N'cdc_heartbeat',
        @capture_instance = N'dbo_cdc_heartbeat',
        @role_name = NULL,
        @supports_net_changes = 0;
END;

DECLARE @database sysname = DB_NAME();
DECLARE @job sysname = N'cdc_heartbeat_' + @database;

IF NOT EXISTS (SELECT 1 FROM msdb.dbo.sysjobs WHERE name = @job)
BEGIN
    EXEC msdb.dbo.sp_add_job
        @job_name = @job,
        @description = N'mssql-cdc heartbeat: updates dbo.cdc_heartbeat every 10 s so that CDC''s max LSN keeps up on a quiet database.';
    EXEC msdb.dbo.sp_add_jobstep
        @job_name = @job,
        @step_name = N'beat',
        @subsystem = N'TSQL',
        @database_name = @database,
        @command = N'UPDATE dbo.cdc_heartbeat SET beat_at = SYSUTCDATETIME() WHERE id = 1;';
    EXEC msdb.dbo.sp_add_jobschedule
        @job_name = @job,
        @name = N'every 10 seconds',
        @freq_type = 4,             -- daily
        @freq_interval = 1,         -- every day
        @freq_subday_type = 2,      -- in seconds
        @freq_subday_interval = 10; -- every 10
    EXEC msdb.dbo.sp_add_jobserver @job_name = @job, @server_name = N'(local)';
END;
