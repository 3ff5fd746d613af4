package execute

// ExecuteCore is executeCore for the tests of package execute_test,
// which may import the server (it imports this package).
var ExecuteCore = executeCore
