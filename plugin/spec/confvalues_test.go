package spec

import "testing"

// sparkConf values sparkplug reads are read as Spark reads them; what
// Spark refuses, or what sparkplug cannot be sure to read alike, is a
// validation error naming the key.
func TestValidateConfValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		conf map[string]string
		want []wantErr
	}{
		{"Arabic-Indic digits: Java reads 100, sparkplug asks for 100", map[string]string{"spark.executor.instances": "١٠٠"},
			[]wantErr{{"spark.sparkConf[spark.executor.instances]", "write the number in digits 0-9 (100)"}}},
		{"a boolean in any case is Spark's", map[string]string{"spark.dynamicAllocation.enabled": "tRuE", "spark.dynamicAllocation.maxExecutors": "4"}, nil},
		{"a boolean Spark refuses", map[string]string{"spark.dynamicAllocation.enabled": "1"},
			[]wantErr{{"spark.sparkConf[spark.dynamicAllocation.enabled]", `Invalid value: "1": Spark refuses it: want true or false`}}},
		{"a no-break space Java's trim keeps", map[string]string{"spark.executor.memory": "4g\u00a0"},
			[]wantErr{{"spark.sparkConf[spark.executor.memory]", "U+00A0"}}},
		{"spaces spark-submit reads untrimmed", map[string]string{"spark.executor.instances": "4 "},
			[]wantErr{{"spark.sparkConf[spark.executor.instances]", "remove the spaces"}}},
		{"spaces Spark trims", map[string]string{"spark.dynamicAllocation.maxExecutors": " 4\t"}, nil},
		{"off-heap on without a size", map[string]string{"spark.memory.offHeap.enabled": "TRUE"},
			[]wantErr{{"spark.sparkConf[spark.memory.offHeap.size]", "off-heap size of 1m or more"}}},
		{"off-heap on with a size", map[string]string{"spark.memory.offHeap.enabled": "TRUE", "spark.memory.offHeap.size": "2g"}, nil},
		{"overflow of a Java int", map[string]string{"spark.ui.port": "4294971136"},
			[]wantErr{{"spark.sparkConf[spark.ui.port]", "beyond a Java int"}}},
		{"fractional cores", map[string]string{"spark.driver.cores": "0.5"},
			[]wantErr{{"spark.sparkConf[spark.driver.cores]", "want a whole number"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			s.SparkConf = tc.conf
			checkErrs(t, Validate(s), tc.want)
		})
	}
}

func TestMemoryOverheadFactorFieldReadAsSpark(t *testing.T) {
	for v, ok := range map[string]bool{"0.4": true, " 0.4\n": true, "0.4\u00a0": false, "0.4d": false, "NaN": false} {
		s := validSpec()
		s.MemoryOverheadFactor = ptr(v)
		if errs := Validate(s); (len(errs) == 0) != ok {
			t.Errorf("memoryOverheadFactor %q: %v, want valid %t", v, errs, ok)
		}
	}
}

// spark.dynamicAllocation.enabled in any case turns dynamic allocation on,
// as in Spark: no default executor count is set, and sparkplug expects
// none.
func TestDynamicAllocationEnabledReadAsSpark(t *testing.T) {
	for v, want := range map[string]bool{"tRuE": true, " TRUE\t": true, "true": true, "False": false, "1": false, "": false, "true\u00a0": false} {
		s := &SparkApplicationSpec{SparkConf: map[string]string{"spark.dynamicAllocation.enabled": v}}
		SetDefaults(s)
		if got := s.DynamicAllocationEnabled(); got != want {
			t.Errorf("spark.dynamicAllocation.enabled %q: enabled %t, want %t", v, got, want)
		}
		if defaulted := s.Executor.Instances != nil; defaulted == want {
			t.Errorf("spark.dynamicAllocation.enabled %q: executor.instances defaulted %t, want %t", v, defaulted, !want)
		}
	}
}
