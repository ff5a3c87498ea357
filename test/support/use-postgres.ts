// setupFiles of the "postgres+redis" jest project.
process.env['TEST_BACKEND'] = 'postgres';
