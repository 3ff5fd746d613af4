package spec

// ArchivesLogs reports whether the step's driver log is stored in the
// workflow's artifact repository when the driver ends
// (sparkplug.archiveLogs, else the plugin's --archive-logs, which
// ParseWith fills in).
func (s *SparkApplicationSpec) ArchivesLogs() bool {
	return s != nil && s.Sparkplug != nil && s.Sparkplug.ArchiveLogs != nil && *s.Sparkplug.ArchiveLogs
}
