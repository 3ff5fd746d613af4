package spec

// DriverImage is the image of the driver container: spark.driver.image,
// else spark.image. Validate makes sure one of them is set.
func (s *SparkApplicationSpec) DriverImage() string {
	return firstImage(s.Driver.Image, s.Image)
}

// ExecutorImage is the image of the executor containers:
// spark.executor.image, else spark.image.
func (s *SparkApplicationSpec) ExecutorImage() string {
	return firstImage(s.Executor.Image, s.Image)
}

func firstImage(images ...*string) string {
	for _, i := range images {
		if i != nil && *i != "" {
			return *i
		}
	}
	return ""
}
