// Package drivertest builds, for tests, driver pods in the states a
// kubelet reports and the stand-ins sparkplug gathers for a lost or a
// stopped driver: the labels and annotations package driverpod reads and
// the container state package state assesses.
package drivertest
